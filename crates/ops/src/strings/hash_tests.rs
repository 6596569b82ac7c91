//! Unit tests of the string hashes.

use crate::strings::hashing::{siphash24, Lookup};

#[test]
#[allow(deprecated)]
fn siphash_matches_the_standard_library_reference() {
    use std::hash::{Hasher, SipHasher};
    for (k0, k1) in [(0u64, 0u64), (1, 2), (987654321, 42), (u64::MAX, 12345)] {
        for data in [&b""[..], b"a", b"hello", b"exactly8", b"fifteen bytes!!", "世界🙂".as_bytes()] {
            let mut reference = SipHasher::new_with_keys(k0, k1);
            reference.write(data);
            assert_eq!(siphash24(k0, k1, data), reference.finish(), "key ({k0}, {k1}), {data:?}");
        }
    }
}

#[test]
fn lookup_refuses_duplicates_and_zero_buckets() {
    let e = Lookup::new(vec![b"a".to_vec(), b"b".to_vec(), b"a".to_vec()], 1).unwrap_err();
    assert_eq!(e.kind(), ragtime_core::ErrorKind::InvalidValue);
    assert!(e.to_string().contains("vocab[2]"), "{e}");
    assert_eq!(Lookup::new(vec![], 0).unwrap_err().kind(), ragtime_core::ErrorKind::InvalidArgument);
    let table = Lookup::new(vec![b"x".to_vec()], 3).unwrap();
    assert_eq!(table.id(b"x"), 0);
    assert_eq!(table.id(b"y"), 1 + (farmhash::fingerprint64(b"y") % 3) as i64);
}
