"""Signed frames (docs/FORMAT.md section 6, tag 2): sign and verify, a
subscriber that takes only frames its keys signed, key rotation, frames
signed by the cbloom CLI and by Python read by the other, and the signed
golden vectors."""

from __future__ import annotations

import pathlib
import subprocess

import compressed_bloom as cb
import pytest

from conftest import VECTORS, keys, table, vector

# Fixed test keys (secrets anyone can read: for tests only).
SECRET_A = bytes(range(32))
SECRET_B = bytes(range(100, 132))


def bloom(first: int, last: int) -> cb.BloomFilter:
    f = cb.BloomFilter(8192, 3, 5)
    f.update(keys(first, last))
    return f


def test_public_key_and_generate_key():
    secret, public = cb.generate_key()
    assert len(secret) == 32 and len(public) == 32
    assert cb.public_key(secret) == public
    assert cb.generate_key()[0] != secret
    # The key of the golden vectors (secret 00 01 .. 1f), listed beside them.
    listed = (VECTORS / "golden_signed.txt").read_text().split("# public key ")[1].split()[0]
    assert cb.public_key(SECRET_A).hex() == listed
    for bad in (b"", b"x" * 31, b"x" * 33):
        with pytest.raises(ValueError, match="32 bytes"):
            cb.public_key(bad)
    with pytest.raises(TypeError):
        cb.public_key("a" * 32)  # type: ignore[arg-type]


def test_sign_verify_round_trip():
    f = bloom(1, 500)
    plain = f.encode()
    public = cb.public_key(SECRET_A)
    signed = cb.sign(plain, SECRET_A)
    assert cb.inspect(plain).signer is None
    # The key id record, the move to version 3 and the 64-byte signature.
    assert len(signed) > len(plain) + 64
    info = cb.verify(signed, [public])
    assert info.signer == public[:8] == cb.inspect(signed).signer
    assert info.frame_len == len(signed) and info.kind == "standard"
    assert 'signer=bytes.fromhex("%s")' % public[:8].hex() in repr(info)
    # The same filter, read by decoders that do not check the signature.
    assert cb.decode(signed) == f
    # Bytes-like arguments, and the other key among the ones given.
    assert cb.verify(bytearray(signed), [memoryview(cb.public_key(SECRET_B)), public]).signer
    assert cb.sign(memoryview(plain), bytearray(SECRET_A)) == signed
    # Deltas are signed the same way, and signing again replaces the signer.
    g = f.copy()
    g.update(keys(501, 520))
    d = cb.sign(cb.delta(f, g, identity=(1, 1, 1)), SECRET_A)
    assert cb.verify(d, [public]).is_delta
    f.apply(d)
    assert f == g
    again = cb.sign(signed, SECRET_B)
    assert cb.verify(again, [cb.public_key(SECRET_B)]).signer == cb.public_key(SECRET_B)[:8]


def test_verify_refusals():
    plain = bloom(1, 100).encode()
    signed = cb.sign(plain, SECRET_A)
    public = cb.public_key(SECRET_A)
    other = cb.public_key(SECRET_B)
    with pytest.raises(cb.UnsignedError) as e:
        cb.verify(plain, [public])
    assert e.value.reason == "unsigned"
    with pytest.raises(cb.UnknownKeyError) as e:
        cb.verify(signed, [other])
    assert e.value.key_id == public[:8] and e.value.reason == "unknown_key"
    bad = bytearray(signed)
    bad[-1] ^= 1
    with pytest.raises(cb.BadSignatureError) as e:
        cb.verify(bytes(bad), [public])
    assert e.value.key_id == public[:8] and e.value.reason == "bad_signature"
    # From verify, each is a DecodeError (and a ValueError) as well.
    for frame, keys_ in ((plain, [public]), (signed, [other]), (bytes(bad), [public])):
        with pytest.raises(cb.DecodeError):
            cb.verify(frame, keys_)
        with pytest.raises(cb.SignatureError):
            cb.verify(frame, keys_)
    # A flipped bit before the signature breaks the CRC first: an invalid frame.
    broken = bytearray(signed)
    broken[10] ^= 1
    with pytest.raises(cb.DecodeError) as e:
        cb.verify(bytes(broken), [public])
    assert not isinstance(e.value, cb.SignatureError)
    # Limits apply as for inspect.
    with pytest.raises(cb.LimitError):
        cb.verify(signed, [public], max_bytes=100)
    # Keys must be a list of 32-byte public keys.
    with pytest.raises(TypeError, match="wrap it in a list"):
        cb.verify(signed, public)
    with pytest.raises(ValueError, match=r"keys\[1\] must be 32 bytes"):
        cb.verify(signed, [public, public[:31]])
    with pytest.raises(TypeError):
        cb.sign(signed, None)  # type: ignore[arg-type]
    with pytest.raises(cb.DecodeError):
        cb.sign(plain[:-1], SECRET_A)


def test_exception_hierarchy():
    for cls in (cb.UnsignedError, cb.UnknownKeyError, cb.BadSignatureError):
        assert issubclass(cls, cb.SignatureError)
        assert issubclass(cls, cb.SyncError) and issubclass(cls, cb.DecodeError)
        assert cls.__module__ == "compressed_bloom"


def state(sub: cb.Subscriber):
    return sub.filter, sub.version, sub.digest


def test_subscriber_with_keys_refuses_and_changes_nothing():
    f = bloom(1, 100)
    public = cb.public_key(SECRET_A)
    pub = cb.Publisher(f, stream=3, epoch=7, signing_key=SECRET_A)
    assert pub.public_key == public
    sub = cb.Subscriber(cb.BloomFilter, verifying_keys=[public])
    assert sub.verifying_keys == [public]
    first = pub.publish()
    assert cb.verify(first.frame, [public]).identity == (3, 7, 0)
    assert sub.receive(first.frame) == "full"
    before = state(sub)

    # Each refused frame claims the next version, so that only the
    # signature stands in its way.
    g = f.copy()
    g.update(keys(101, 120))
    unsigned = cb.delta(f, g, identity=(3, 7, 1))
    other_key = cb.sign(unsigned, SECRET_B)
    flipped = bytearray(cb.sign(unsigned, SECRET_A))
    flipped[-10] ^= 0x10
    for frame, cls in ((unsigned, cb.UnsignedError), (other_key, cb.UnknownKeyError),
                       (bytes(flipped), cb.BadSignatureError)):
        with pytest.raises(cls) as e:
            sub.receive(frame)
        assert isinstance(e.value, cb.SyncError)
        assert state(sub) == before
    assert e.value.key_id == public[:8]
    # The same frames are taken by a subscriber without keys.
    trusting = cb.Subscriber(cb.BloomFilter)
    trusting.receive(first.frame)
    assert trusting.receive(other_key) == "delta" and trusting.filter == g

    # The publisher's next update is still taken.
    f.update(keys(101, 120))
    u = pub.publish()
    assert sub.receive(u.frame) == "delta"
    assert sub.filter == f and sub.version == (3, 7, 1)
    # A full frame for a subscriber that lost one is signed too.
    full = pub.full_frame()
    assert full is not None
    assert cb.verify(full.frame, [public]).identity == (3, 7, 1)
    late = cb.Subscriber(verifying_keys=[public])
    assert late.receive(full.frame) == "full" and late.filter == f


def test_key_rotation():
    old, new = cb.public_key(SECRET_A), cb.public_key(SECRET_B)
    f = bloom(1, 50)
    pub = cb.Publisher(f, stream=1, epoch=1, signing_key=SECRET_A)
    sub = cb.Subscriber(verifying_keys=[old])
    sub.receive(pub.publish().frame)

    # Subscribers learn the new key first, then the publisher moves to it.
    sub.verifying_keys = [old, new]
    signers = []
    for i in range(4):
        f.add(b"rotate-%d" % i)
        if i == 2:
            pub.set_signing_key(SECRET_B)
            assert pub.public_key == new
        u = pub.publish()
        signers.append(cb.inspect(u.frame).signer)
        sub.receive(u.frame)
        assert sub.version == u.identity and sub.filter == f
    assert signers == [old[:8]] * 2 + [new[:8]] * 2

    # Then they drop the old key: a frame the old key signs is unknown.
    sub.verifying_keys = [new]
    assert sub.verifying_keys == [new]
    before = state(sub)
    f.add(b"after")
    replay = cb.sign(f.encode(identity=(1, 1, 5)), SECRET_A)
    with pytest.raises(cb.UnknownKeyError) as e:
        sub.receive(replay)
    assert e.value.key_id == old[:8]
    assert state(sub) == before
    u = pub.publish()
    assert u.identity == (1, 1, 5)
    sub.receive(u.frame)
    assert sub.filter == f

    # Without keys again, unsigned frames are taken; the filter is kept.
    pub.set_signing_key(None)
    assert pub.public_key is None
    sub.verifying_keys = None
    assert sub.verifying_keys == []
    f.add(b"unsigned")
    u = pub.publish()
    assert cb.inspect(u.frame).signer is None
    sub.receive(u.frame)
    assert sub.filter == f


def test_subscriber_key_arguments():
    with pytest.raises(TypeError, match="wrap it in a list"):
        cb.Subscriber(verifying_keys=cb.public_key(SECRET_A))
    with pytest.raises(ValueError, match="32 bytes"):
        cb.Subscriber(verifying_keys=[b"short"])
    with pytest.raises(ValueError, match="32 bytes"):
        cb.Publisher(bloom(1, 2), signing_key=b"short")
    sub = cb.Subscriber(verifying_keys=[cb.public_key(SECRET_A)])
    with pytest.raises(ValueError):
        sub.verifying_keys = [b"x"]
    # A refused setting keeps the keys.
    assert sub.verifying_keys == [cb.public_key(SECRET_A)]
    assert "verifying_keys=1" in repr(sub)


def run(cbloom: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([cbloom, *args], capture_output=True, text=True)


def test_python_signed_frame_verified_by_the_cli(cbloom, tmp_path: pathlib.Path):
    secret, public = cb.generate_key()
    f = bloom(1, 200)
    frame = tmp_path / "f.cbf"
    frame.write_bytes(cb.sign(f.encode(), secret))
    (tmp_path / "k.pub").write_text(public.hex() + "\n")
    r = run(cbloom, "query", str(frame), "key-7", "--verify", str(tmp_path / "k.pub"))
    assert r.returncode == 0, r.stderr
    assert "present" in r.stdout
    # Another key: refused.
    (tmp_path / "other.pub").write_text(cb.public_key(SECRET_B).hex() + "\n")
    r = run(cbloom, "query", str(frame), "key-7", "--verify", str(tmp_path / "other.pub"))
    assert r.returncode != 0 and "not among the receiver's keys" in r.stderr
    # A flipped signature bit: refused.
    bad = bytearray(frame.read_bytes())
    bad[-1] ^= 1
    frame.write_bytes(bytes(bad))
    r = run(cbloom, "query", str(frame), "key-7", "--verify", str(tmp_path / "k.pub"))
    assert r.returncode != 0 and "signature" in r.stderr


def test_cli_signed_frame_verified_by_python(cbloom, tmp_path: pathlib.Path):
    r = run(cbloom, "keygen", "-o", str(tmp_path / "k"))
    assert r.returncode == 0, r.stderr
    secret = bytes.fromhex((tmp_path / "k").read_text().strip())
    public = bytes.fromhex((tmp_path / "k.pub").read_text().strip())
    assert cb.public_key(secret) == public
    ks = keys(1, 300)
    (tmp_path / "keys.txt").write_bytes(b"".join(k + b"\n" for k in ks))
    r = run(cbloom, "build", "--keys", str(tmp_path / "keys.txt"), "--fpr", "0.01",
            "-o", str(tmp_path / "f.cbf"), "--sign", str(tmp_path / "k"))
    assert r.returncode == 0, r.stderr
    frame = (tmp_path / "f.cbf").read_bytes()
    info = cb.verify(frame, [public])
    assert info.signer == public[:8]
    g = cb.decode(frame)
    assert all(k in g for k in ks)
    # Python signs the CLI's filter to the same bytes (Ed25519 is deterministic).
    unsigned = g.encode()
    assert cb.sign(unsigned, secret) == frame
    sub = cb.Subscriber(verifying_keys=[public])
    assert sub.receive(frame) == "full" and sub.filter == g
    with pytest.raises(cb.UnknownKeyError):
        cb.verify(frame, [cb.public_key(SECRET_A)])


def test_golden_signed_vectors():
    public = cb.public_key(SECRET_A)
    full, delta = vector("signed_full.cbf"), vector("signed_delta.cbf")
    sizes = {name: int(n) for name, n in table("golden_signed.txt")}
    assert sizes == {"signed_full": len(full), "signed_delta": len(delta)}
    info = cb.verify(full, [public])
    assert (info.signer, info.identity, info.is_delta) == (public[:8], (1, 2, 3), False)
    info = cb.verify(delta, [public])
    assert (info.signer, info.identity, info.is_delta) == (public[:8], (1, 2, 4), True)
    # The filters they hold (tools/vectors: m 2000, k 3, seed 7, key-1 ..
    # key-100 then key-110), signed from Python to the same bytes.
    old, new = cb.BloomFilter(2000, 3, 7), cb.BloomFilter(2000, 3, 7)
    old.update(keys(1, 100))
    new.update(keys(1, 110))
    assert cb.sign(old.encode(identity=(1, 2, 3)), SECRET_A) == full
    assert cb.sign(cb.delta(old, new, identity=(1, 2, 4)), SECRET_A) == delta
    sub = cb.Subscriber(cb.BloomFilter, verifying_keys=[public])
    assert sub.receive(full) == "full" and sub.filter == old
    assert sub.receive(delta) == "delta" and sub.filter == new
    # Every single-bit flip is refused.
    for frame in (full, delta):
        for bit in range(len(frame) * 8):
            b = bytearray(frame)
            b[bit // 8] ^= 1 << (bit % 8)
            with pytest.raises(cb.DecodeError):
                cb.verify(bytes(b), [public])
