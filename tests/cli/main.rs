//! `cbloom` run as a process: every command end to end, the defaults, the
//! failures people and scripts meet, ribbon frames, and Squid digests.
#![cfg(feature = "cli")]

#[path = "../common/mod.rs"]
mod common;

mod bip158;
mod bip37;
mod bounds;
mod defaults;
mod end_to_end;
mod follow;
mod limits;
mod messages;
mod plan_flags;
mod process;
mod ribbon;
mod robust;
mod signed;
mod squid;

/// `cbloom ARGS`, run to its end with no standard input.
pub(crate) fn cbloom(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_cbloom"))
        .args(args)
        .output()
        .unwrap()
}

/// A path as a command-line argument.
pub(crate) fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}
