//! Fuzzing the GGUF reader: random bytes, random counts behind a valid header, and mutated valid files must give
//! Ok or Err, never a panic, and everything a parsed file offers must work without panicking either.

use mmqgen_formats::gguf::{GgufFile, GgufValue};
use mmqgen_formats::q6k::{dequantize_rows, BLOCK_BYTES};
use proptest::prelude::*;

const SMALL: &[u8] = include_bytes!("fixtures/small_q6k.gguf");
const ALIGN64: &[u8] = include_bytes!("fixtures/align64.gguf");

/// Parses `bytes` and, if that works, uses every accessor; checks the invariants they promise.
fn exercise(bytes: &[u8]) {
    let Ok(file) = GgufFile::parse(bytes) else {
        return;
    };
    let _ = (
        file.summary(),
        file.describe_tensors(),
        file.version(),
        file.alignment(),
    );
    assert!(file.data_start() % file.alignment() == 0);
    for (key, value) in file.metadata() {
        let _ = (
            value.to_string(),
            value.as_str(),
            value.as_u64(),
            file.get(key),
        );
        walk(value);
    }
    for t in file.tensors() {
        let _ = t.element_count();
        if let Ok(data) = file.tensor_data(t.name) {
            assert_eq!(Some(data.len() as u64), t.n_bytes);
        }
        if let Ok(q) = file.q6k_tensor(t.name) {
            assert_eq!(q.bytes().len(), q.rows() * q.row_bytes());
            assert_eq!(q.k() % 256, 0);
            assert_eq!(q.row_bytes() % BLOCK_BYTES, 0);
            for r in 0..q.rows().min(64) {
                assert!(q.row(r).is_some());
            }
            assert!(q.row(q.rows()).is_none());
            if q.bytes().len() <= 1 << 20 {
                assert!(dequantize_rows(q.bytes()).is_ok());
            }
        }
    }
    let _ = file.tensor("certainly not a tensor name");
}

fn walk(value: &GgufValue<'_>) {
    if let GgufValue::Array(a) = value {
        let mut n = 0u64;
        for element in a.iter() {
            n += 1;
            walk(&element);
        }
        assert_eq!(n, a.len(), "an array iterates its declared length");
    }
}

fn header(version: u32, tensors: u64, kvs: u64) -> Vec<u8> {
    [
        b"GGUF".as_slice(),
        &version.to_le_bytes(),
        &tensors.to_le_bytes(),
        &kvs.to_le_bytes(),
    ]
    .concat()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        exercise(&bytes);
    }

    #[test]
    fn random_bodies_behind_a_valid_header_never_panic(
        version in 2u32..=3,
        tensors in prop_oneof![0u64..4, any::<u64>()],
        kvs in prop_oneof![0u64..4, any::<u64>()],
        body in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        let mut bytes = header(version, tensors, kvs);
        bytes.extend_from_slice(&body);
        exercise(&bytes);
    }

    #[test]
    fn mutated_valid_files_never_panic(
        which in any::<bool>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = if which { SMALL.to_vec() } else { ALIGN64.to_vec() };
        // Edit mostly the header and tables (the first 1 KiB), where the structure is.
        let table = bytes.len().min(1024);
        for (at, value) in edits {
            let i = at.index(table);
            bytes[i] = value;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        exercise(&bytes);
    }

    #[test]
    fn mutated_counts_and_lengths_never_panic(
        at in 0usize..736,
        value in prop_oneof![Just(0u64), Just(u64::MAX), Just(1u64 << 32), Just(1u64 << 62), 0u64..10_000],
    ) {
        // Overwrite 8 bytes anywhere in the header or tables with a suspicious 64-bit count or length.
        let mut bytes = SMALL.to_vec();
        let at = at.min(bytes.len() - 8);
        bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
        exercise(&bytes);
    }
}

#[test]
fn valid_fixtures_pass_the_exercise() {
    exercise(SMALL);
    exercise(ALIGN64);
    assert!(GgufFile::parse(SMALL).is_ok() && GgufFile::parse(ALIGN64).is_ok());
}
