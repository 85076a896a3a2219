//! The GGUF reader on files written by an independent writer (the PyPI `gguf` package, through
//! tests/fixtures/make_gguf.py) and on broken files, one test per error sentence.

use mmqgen_formats::gguf::{
    GgmlType, GgufError, GgufFile, GgufValue, GgufValueType, DEFAULT_ALIGNMENT,
};
use mmqgen_formats::q6k::{dequantize_rows, BLOCK_BYTES};

const SMALL: &[u8] = include_bytes!("fixtures/small_q6k.gguf");
const SMALL_DEQUANT: &[u8] = include_bytes!("fixtures/small_q6k_dequant.f32");
const ALIGN64: &[u8] = include_bytes!("fixtures/align64.gguf");
const RANDOM_BLOCKS: &[u8] = include_bytes!("fixtures/random_blocks.q6k");
const RANDOM_DEQUANT: &[u8] = include_bytes!("fixtures/random_blocks_dequant.f32");
const GGML_REF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/q6k-ggml-ref/ggml.q6k"
);

const Q6K_NAME: &str = "blk.0.ffn_down.weight";

fn ggml_blocks(first: usize, count: usize) -> Vec<u8> {
    let all = std::fs::read(GGML_REF).unwrap_or_else(|e| {
        panic!("the ggml q6_K fixture is missing: cannot read {GGML_REF}: {e}")
    });
    all[first * BLOCK_BYTES..(first + count) * BLOCK_BYTES].to_vec()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn assert_bits_eq(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!(
            "{what}: weight {i} (block {}) is {:e}, gguf's numpy dequantizer says {:e}",
            i / 256,
            got[i],
            want[i]
        );
    }
}

/// Every error message is one sentence: one line, no full stop inside it.
fn assert_one_sentence(message: &str) {
    assert!(
        !message.contains('\n') && !message.contains(". "),
        "not one sentence: {message}"
    );
    assert!(
        !message.is_empty() && !message.ends_with('.'),
        "unexpected shape: {message}"
    );
}

fn err(bytes: &[u8]) -> GgufError {
    match GgufFile::parse(bytes) {
        Ok(_) => panic!("the file parsed, but an error was expected"),
        Err(e) => {
            assert_one_sentence(&e.to_string());
            e
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Files from the gguf package.

#[test]
fn small_file_header_metadata_and_layout() {
    let f = GgufFile::parse(SMALL).expect("small_q6k.gguf parses");
    assert_eq!(f.version(), 3);
    assert_eq!(f.alignment(), DEFAULT_ALIGNMENT);
    assert_eq!(
        f.data_start(),
        736,
        "the gguf package's reader puts the data section at 736"
    );
    assert_eq!(f.metadata().len(), 16);
    assert_eq!(
        f.get("general.architecture").and_then(GgufValue::as_str),
        Some("mmqgen-test")
    );
    assert_eq!(
        f.get("general.name").and_then(GgufValue::as_str),
        Some("mmqgen formats fixture")
    );
    assert_eq!(f.get("test.u8"), Some(&GgufValue::U8(200)));
    assert_eq!(f.get("test.i8"), Some(&GgufValue::I8(-100)));
    assert_eq!(f.get("test.u16"), Some(&GgufValue::U16(60000)));
    assert_eq!(f.get("test.i16"), Some(&GgufValue::I16(-30000)));
    assert_eq!(f.get("test.u32"), Some(&GgufValue::U32(4_000_000_000)));
    assert_eq!(f.get("test.i32"), Some(&GgufValue::I32(-2_000_000_000)));
    assert_eq!(f.get("test.f32"), Some(&GgufValue::F32(0.5)));
    assert_eq!(f.get("test.bool"), Some(&GgufValue::Bool(true)));
    assert_eq!(
        f.get("test.string").and_then(GgufValue::as_str),
        Some("héllo")
    );
    assert_eq!(f.get("test.u64"), Some(&GgufValue::U64((1 << 63) + 5)));
    assert_eq!(f.get("test.i64"), Some(&GgufValue::I64(-(1 << 62))));
    assert_eq!(f.get("test.f64"), Some(&GgufValue::F64(-0.25)));
    let Some(GgufValue::Array(ints)) = f.get("test.array_i32") else {
        panic!("test.array_i32 is not an array")
    };
    assert_eq!(ints.element_type(), GgufValueType::I32);
    assert_eq!(
        ints.iter().collect::<Vec<_>>(),
        [GgufValue::I32(1), GgufValue::I32(-2), GgufValue::I32(3)]
    );
    let Some(GgufValue::Array(strs)) = f.get("test.array_str") else {
        panic!("test.array_str is not an array")
    };
    assert_eq!(strs.len(), 3);
    assert_eq!(
        strs.iter()
            .map(|v| v.as_str().unwrap_or("?").to_string())
            .collect::<Vec<_>>(),
        ["a", "bc", ""]
    );
    assert_eq!(f.get("no.such.key"), None);

    let t = f.tensors();
    assert_eq!(t.len(), 3);
    let got: Vec<_> = t
        .iter()
        .map(|t| (t.name, t.ggml_type, t.dims.clone(), t.offset, t.n_bytes))
        .collect();
    assert_eq!(
        got,
        [
            (Q6K_NAME, GgmlType::Q6_K, vec![512, 4], 0, Some(1680)),
            (
                "output_norm.weight",
                GgmlType::F32,
                vec![512],
                1696,
                Some(2048)
            ),
            (
                "token_embd.weight",
                GgmlType::F16,
                vec![16, 3],
                3744,
                Some(96)
            ),
        ]
    );
}

#[test]
fn small_file_tensor_bytes_are_what_was_written() {
    let f = GgufFile::parse(SMALL).expect("parses");
    let q = f.q6k_tensor(Q6K_NAME).expect("a q6_K tensor");
    assert_eq!(
        (q.name(), q.rows(), q.k(), q.blocks_per_row(), q.row_bytes()),
        (Q6K_NAME, 4, 512, 2, 420)
    );
    assert_eq!(
        q.bytes(),
        &ggml_blocks(0, 8)[..],
        "the q6_K bytes are ggml.q6k blocks 0..8"
    );
    assert_eq!(q.row(3), Some(&q.bytes()[3 * 420..]));
    assert_eq!(q.row(4), None);
    // Borrowed, not copied: the slice lies inside the file buffer at data_start + offset.
    assert_eq!(q.bytes().as_ptr() as usize - SMALL.as_ptr() as usize, 736);

    let norm = f32s(f.tensor_data("output_norm.weight").expect("F32 data"));
    assert_eq!(
        norm,
        (0..512)
            .map(|i| (i as f32 - 256.0) / 64.0)
            .collect::<Vec<_>>()
    );
    let embd = f.tensor_data("token_embd.weight").expect("F16 data");
    let embd: Vec<f32> = embd
        .chunks_exact(2)
        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
        .collect();
    assert_eq!(embd, (0..48).map(|i| i as f32).collect::<Vec<_>>());
}

#[test]
fn q6k_tensor_dequantizes_like_the_gguf_package() {
    let f = GgufFile::parse(SMALL).expect("parses");
    let q = f.q6k_tensor(Q6K_NAME).expect("a q6_K tensor");
    let got = dequantize_rows(q.bytes()).expect("whole blocks");
    assert_bits_eq(&got, &f32s(SMALL_DEQUANT), "small_q6k.gguf q6_K tensor");
}

#[test]
fn random_blocks_dequantize_like_the_gguf_package() {
    assert_eq!(RANDOM_BLOCKS.len(), 60 * BLOCK_BYTES);
    let got = dequantize_rows(RANDOM_BLOCKS).expect("whole blocks");
    assert_bits_eq(&got, &f32s(RANDOM_DEQUANT), "random_blocks.q6k");
}

#[test]
fn custom_alignment_is_honoured() {
    let f = GgufFile::parse(ALIGN64).expect("align64.gguf parses");
    assert_eq!(f.alignment(), 64);
    assert_eq!(f.get("general.alignment"), Some(&GgufValue::U32(64)));
    assert_eq!(f.data_start(), 192);
    let got: Vec<_> = f
        .tensors()
        .iter()
        .map(|t| (t.name, t.ggml_type, t.dims.clone(), t.offset))
        .collect();
    assert_eq!(
        got,
        [
            ("a", GgmlType::F32, vec![3], 0),
            ("b", GgmlType::Q6_K, vec![256, 2], 64)
        ]
    );
    assert_eq!(f32s(f.tensor_data("a").expect("data")), [1.0, 2.0, 3.0]);
    let b = f.q6k_tensor("b").expect("q6_K");
    assert_eq!((b.rows(), b.k()), (2, 256));
    assert_eq!(b.bytes(), &ggml_blocks(8, 2)[..]);
}

#[test]
fn version_2_file_reads_like_version_3() {
    // The gguf package writes only v3; v2 has the same little-endian layout, so patch the version field.
    let mut v2 = SMALL.to_vec();
    v2[4..8].copy_from_slice(&2u32.to_le_bytes());
    let f2 = GgufFile::parse(&v2).expect("the v2 copy parses");
    let f3 = GgufFile::parse(SMALL).expect("parses");
    assert_eq!(f2.version(), 2);
    assert_eq!(f2.tensors(), f3.tensors());
    assert_eq!(f2.metadata(), f3.metadata());
    assert_eq!(
        f2.q6k_tensor(Q6K_NAME).expect("q6_K").bytes(),
        f3.q6k_tensor(Q6K_NAME).expect("q6_K").bytes()
    );
}

#[test]
fn describe_tensors_gives_one_line_each() {
    let f = GgufFile::parse(SMALL).expect("parses");
    assert_eq!(
        f.describe_tensors(),
        [
            "blk.0.ffn_down.weight  Q6_K  [512, 4]  1680 bytes",
            "output_norm.weight     F32   [512]     2048 bytes",
            "token_embd.weight      F16   [16, 3]   96 bytes",
        ]
    );
    assert_eq!(
        f.summary(),
        "GGUF v3, 3 tensors, 16 metadata keys, alignment 32, data at byte 736"
    );
}

// ---------------------------------------------------------------------------------------------------------------
// Broken files: one test per sentence.

/// A tiny GGUF writer for broken files.
struct Builder {
    version: u32,
    kv: Vec<u8>,
    n_kv: u64,
    infos: Vec<u8>,
    n_tensors: u64,
    data: Vec<u8>,
}

fn gstr(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s);
}

impl Builder {
    fn new() -> Self {
        Builder {
            version: 3,
            kv: vec![],
            n_kv: 0,
            infos: vec![],
            n_tensors: 0,
            data: vec![],
        }
    }

    fn kv(mut self, key: &[u8], type_id: u32, value: &[u8]) -> Self {
        gstr(&mut self.kv, key);
        self.kv.extend_from_slice(&type_id.to_le_bytes());
        self.kv.extend_from_slice(value);
        self.n_kv += 1;
        self
    }

    fn tensor(mut self, name: &str, dims: &[u64], type_id: u32, offset: u64) -> Self {
        gstr(&mut self.infos, name.as_bytes());
        self.infos
            .extend_from_slice(&(dims.len() as u32).to_le_bytes());
        for d in dims {
            self.infos.extend_from_slice(&d.to_le_bytes());
        }
        self.infos.extend_from_slice(&type_id.to_le_bytes());
        self.infos.extend_from_slice(&offset.to_le_bytes());
        self.n_tensors += 1;
        self
    }

    fn data(mut self, n: usize) -> Self {
        self.data = vec![0; n];
        self
    }

    fn build(&self) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&self.n_tensors.to_le_bytes());
        out.extend_from_slice(&self.n_kv.to_le_bytes());
        out.extend_from_slice(&self.kv);
        out.extend_from_slice(&self.infos);
        if !self.infos.is_empty() {
            out.resize(out.len().next_multiple_of(32), 0);
            out.extend_from_slice(&self.data);
        }
        out
    }
}

#[test]
fn builder_files_parse() {
    let bytes = Builder::new()
        .kv(b"general.alignment", 4, &32u32.to_le_bytes())
        .tensor("w", &[256, 2], 14, 0)
        .data(420)
        .build();
    let f = GgufFile::parse(&bytes).expect("a valid hand-made file");
    assert_eq!(f.q6k_tensor("w").expect("q6_K").rows(), 2);
    let empty = Builder::new().build();
    assert_eq!(
        GgufFile::parse(&empty)
            .expect("an empty file is valid")
            .tensors()
            .len(),
        0
    );
}

#[test]
fn truncated_header() {
    let e = err(&SMALL[..10]);
    assert_eq!(
        e.to_string(),
        "the file is truncated: the header needs 24 bytes but the file has 10"
    );
    assert_eq!(
        e,
        GgufError::Truncated {
            what: "the header".into(),
            needed: 24,
            len: 10
        }
    );
    assert_eq!(
        err(&[]).to_string(),
        "the file is truncated: the header needs 24 bytes but the file has 0"
    );
}

#[test]
fn truncated_metadata_and_tensor_infos() {
    // Cut inside the general.architecture value (key at 24..52, type, length at 56..64, 11 bytes at 64..75).
    let e = err(&SMALL[..70]);
    assert_eq!(
        e.to_string(),
        "the file is truncated: the 11-byte string of the value of metadata key 'general.architecture' needs 75 bytes but the file has 70"
    );
    // Every prefix that ends before the last tensor's data is an error, never a panic.
    for cut in 0..SMALL.len() {
        assert!(
            GgufFile::parse(&SMALL[..cut]).is_err(),
            "a {cut}-byte prefix parsed"
        );
    }
}

#[test]
fn huge_counts_fail_without_allocating() {
    let mut b = Builder::new();
    b.n_kv = u64::MAX;
    b.n_tensors = u64::MAX;
    let e = err(&b.build());
    assert_eq!(
        e.to_string(),
        format!("the file is truncated: the length of metadata entry 0 of {} needs 32 bytes but the file has 24", u64::MAX)
    );
    let b = Builder::new().kv(b"k", 8, &u64::MAX.to_le_bytes());
    assert!(matches!(
        err(&b.build()),
        GgufError::Truncated {
            needed: u64::MAX,
            ..
        }
    ));
    // An array claiming 2^61 u64 elements.
    let mut arr = 10u32.to_le_bytes().to_vec();
    arr.extend_from_slice(&(1u64 << 61).to_le_bytes());
    assert!(matches!(
        err(&Builder::new().kv(b"k", 9, &arr).build()),
        GgufError::Truncated { .. }
    ));
    // An array claiming 2^60 strings.
    let mut arr = 8u32.to_le_bytes().to_vec();
    arr.extend_from_slice(&(1u64 << 60).to_le_bytes());
    assert!(matches!(
        err(&Builder::new().kv(b"k", 9, &arr).build()),
        GgufError::Truncated { .. }
    ));
}

#[test]
fn wrong_magic() {
    let mut bytes = SMALL.to_vec();
    bytes[..4].copy_from_slice(b"GGML");
    assert_eq!(
        err(&bytes).to_string(),
        "wrong magic: a GGUF file starts with the bytes 'GGUF', this one starts with 'GGML'"
    );
    bytes[..4].copy_from_slice(b"\x7fELF");
    assert_eq!(
        err(&bytes).to_string(),
        "wrong magic: a GGUF file starts with the bytes 'GGUF', this one starts with '\\x7fELF'"
    );
    assert_eq!(err(b"PK\x03\x04").to_string(), "wrong magic: a GGUF file starts with the bytes 'GGUF', this one starts with 'PK\\x03\\x04'");
}

#[test]
fn unsupported_version() {
    for version in [0u32, 1, 4, 1000] {
        let mut b = Builder::new();
        b.version = version;
        let e = err(&b.build());
        assert_eq!(e, GgufError::UnsupportedVersion { version });
        assert_eq!(
            e.to_string(),
            format!("unsupported GGUF version {version}: mmqgen reads versions 2 and 3")
        );
    }
    // A version-1 header is shorter than 24 bytes; the version is still what gets named.
    let v1 = [
        b"GGUF".as_slice(),
        &1u32.to_le_bytes(),
        &0u32.to_le_bytes(),
        &0u32.to_le_bytes(),
    ]
    .concat();
    assert_eq!(err(&v1), GgufError::UnsupportedVersion { version: 1 });
}

#[test]
fn big_endian_file() {
    let mut b = Builder::new();
    b.version = 3u32.swap_bytes();
    assert_eq!(
        err(&b.build()).to_string(),
        "the file is a big-endian GGUF (version 3 byte-swapped): mmqgen reads little-endian GGUF files only"
    );
}

#[test]
fn data_past_the_end() {
    let cut = &SMALL[..SMALL.len() - 10];
    assert_eq!(
        err(cut).to_string(),
        "tensor 'token_embd.weight' data runs past the end of the file (offset 4480, 96 bytes, file has 4566): the data must lie inside the file"
    );
    // An offset so large that data start + offset overflows.
    let b = Builder::new().tensor("w", &[4], 0, u64::MAX - 31).data(16);
    assert!(matches!(
        err(&b.build()),
        GgufError::DataPastEnd {
            file_offset: u64::MAX,
            ..
        }
    ));
}

#[test]
fn wrong_type() {
    let f = GgufFile::parse(SMALL).expect("parses");
    let e = f
        .q6k_tensor("output_norm.weight")
        .expect_err("an F32 tensor is not q6_K");
    assert_eq!(
        e.to_string(),
        "tensor 'output_norm.weight' has type F32 but a q6_K tensor (type 14) is needed"
    );
    assert_one_sentence(&e.to_string());
    let e = f.q6k_tensor("token_embd.weight").expect_err("F16");
    assert_eq!(
        e,
        GgufError::WrongType {
            name: "token_embd.weight".into(),
            ggml_type: GgmlType::F16
        }
    );
}

#[test]
fn missing_name() {
    let f = GgufFile::parse(SMALL).expect("parses");
    let e = f
        .q6k_tensor("blk.1.ffn_down.weight")
        .expect_err("no such tensor");
    assert_eq!(
        e.to_string(),
        "no tensor named 'blk.1.ffn_down.weight' in the file (it has 3 tensors: blk.0.ffn_down.weight, output_norm.weight, token_embd.weight)"
    );
    let mut b = Builder::new();
    for i in 0..7 {
        b = b.tensor(&format!("t{i}"), &[8], 0, 32 * i);
    }
    let bytes = b.data(256).build();
    let f = GgufFile::parse(&bytes).expect("seven small tensors");
    assert_eq!(
        f.tensor("x").expect_err("missing").to_string(),
        "no tensor named 'x' in the file (it has 7 tensors: t0, t1, t2, t3, t4...)"
    );
    let empty = Builder::new().build();
    let f = GgufFile::parse(&empty).expect("empty");
    assert_eq!(
        f.tensor("x").expect_err("missing").to_string(),
        "no tensor named 'x' in the file (it has 0 tensors)"
    );
}

#[test]
fn bad_metadata() {
    let e = err(&Builder::new().kv(b"k", 13, &[]).build());
    assert_eq!(
        e.to_string(),
        "metadata key 'k' has value type 13: GGUF value types are 0 to 12"
    );
    let e = err(&Builder::new().kv(b"k\xff", 4, &[0; 4]).build());
    assert_eq!(
        e.to_string(),
        "metadata key 0 is not valid UTF-8: GGUF keys and tensor names must be UTF-8"
    );
    let e = err(&Builder::new()
        .kv(b"k", 4, &[0; 4])
        .kv(b"k", 4, &[0; 4])
        .build());
    assert_eq!(
        e.to_string(),
        "metadata key 'k' appears twice: each key may appear once"
    );
    // Arrays nested 9 deep, each holding one array.
    let mut nested = Vec::new();
    for _ in 0..9 {
        nested.extend_from_slice(&9u32.to_le_bytes());
        nested.extend_from_slice(&1u64.to_le_bytes());
    }
    let e = err(&Builder::new().kv(b"k", 9, &nested).build());
    assert_eq!(
        e.to_string(),
        "metadata key 'k' nests arrays more than 8 deep: mmqgen reads at most that many levels"
    );
    // Nested arrays within the limit parse and iterate.
    let mut ok = Vec::new();
    ok.extend_from_slice(&9u32.to_le_bytes());
    ok.extend_from_slice(&2u64.to_le_bytes());
    for _ in 0..2 {
        ok.extend_from_slice(&0u32.to_le_bytes());
        ok.extend_from_slice(&3u64.to_le_bytes());
        ok.extend_from_slice(&[1, 2, 3]);
    }
    let bytes = Builder::new().kv(b"k", 9, &ok).build();
    let f = GgufFile::parse(&bytes).expect("two arrays of three u8");
    let Some(GgufValue::Array(a)) = f.get("k") else {
        panic!("not an array")
    };
    assert_eq!(a.iter().count(), 2);
    assert!(a
        .iter()
        .all(|v| matches!(v, GgufValue::Array(inner) if inner.iter().count() == 3)));
}

#[test]
fn bad_alignment() {
    let e = err(&Builder::new()
        .kv(b"general.alignment", 4, &48u32.to_le_bytes())
        .build());
    assert_eq!(
        e.to_string(),
        "general.alignment is U32 48: it must be a u32 power of two"
    );
    let e = err(&Builder::new()
        .kv(b"general.alignment", 4, &0u32.to_le_bytes())
        .build());
    assert_eq!(
        e.to_string(),
        "general.alignment is U32 0: it must be a u32 power of two"
    );
    let e = err(&Builder::new()
        .kv(b"general.alignment", 10, &64u64.to_le_bytes())
        .build());
    assert_eq!(
        e.to_string(),
        "general.alignment is U64 64: it must be a u32 power of two"
    );
}

#[test]
fn bad_tensor_infos() {
    let e = err(&Builder::new()
        .tensor("w", &[1, 1, 1, 1, 1], 0, 0)
        .data(4)
        .build());
    assert_eq!(
        e.to_string(),
        "tensor 'w' has 5 dimensions: a GGUF tensor has at most 4"
    );
    let e = err(&Builder::new()
        .tensor("w", &[4], 0, 0)
        .tensor("w", &[4], 0, 32)
        .data(64)
        .build());
    assert_eq!(
        e.to_string(),
        "tensor name 'w' appears twice: tensor names must be unique"
    );
    let e = err(&Builder::new()
        .tensor("w", &[100, 4], 14, 0)
        .data(64)
        .build());
    assert_eq!(e.to_string(), "tensor 'w' of type Q6_K has rows of 100 elements: rows of that type must be a multiple of 256");
    let e = err(&Builder::new()
        .tensor("w", &[1 << 40, 1 << 40], 0, 0)
        .data(64)
        .build());
    assert_eq!(
        e.to_string(),
        "tensor 'w' has shape [1099511627776, 1099511627776], whose size does not fit in 64 bits: a tensor must fit in the file"
    );
    let e = err(&Builder::new().tensor("w", &[4], 0, 16).data(64).build());
    assert_eq!(
        e.to_string(),
        "tensor 'w' starts at data offset 16, which is not a multiple of the alignment 32: every tensor must be aligned"
    );
    let bad_name = {
        let mut b = Builder::new();
        gstr(&mut b.infos, b"\xc3");
        b.infos.extend_from_slice(&0u32.to_le_bytes());
        b.n_tensors = 1;
        b.build()
    };
    assert_eq!(
        err(&bad_name).to_string(),
        "the name of tensor 0 is not valid UTF-8: GGUF keys and tensor names must be UTF-8"
    );
}

#[test]
fn unknown_type_parses_but_its_data_cannot_be_read() {
    let bytes = Builder::new()
        .tensor("w", &[64], 99, 0)
        .tensor("v", &[4], 0, 0)
        .data(16)
        .build();
    let f = GgufFile::parse(&bytes).expect("an unknown type is listed, not refused");
    assert_eq!(f.tensors()[0].ggml_type, GgmlType::Other(99));
    assert_eq!(f.tensors()[0].n_bytes, None);
    let e = f.tensor_data("w").expect_err("unknown size");
    assert_eq!(e.to_string(), "tensor 'w' has type unknown(99), whose block size mmqgen does not know: its data cannot be read");
    assert_eq!(
        f.describe_tensors(),
        [
            "w  unknown(99)  [64]  ? bytes",
            "v  F32          [4]   16 bytes"
        ]
    );
    let e = f.q6k_tensor("w").expect_err("not q6_K");
    assert_eq!(
        e.to_string(),
        "tensor 'w' has type unknown(99) but a q6_K tensor (type 14) is needed"
    );
}

#[test]
fn empty_q6k_rows_have_no_row_past_the_end() {
    // Found by the fuzzer: with K = 0 every row is empty, and row(rows) must still be None.
    let bytes = Builder::new().tensor("w", &[0, 4], 14, 0).build();
    let f = GgufFile::parse(&bytes).expect("a q6_K tensor of 4 empty rows");
    let q = f.q6k_tensor("w").expect("q6_K");
    assert_eq!((q.rows(), q.k(), q.bytes().len()), (4, 0, 0));
    assert_eq!(q.row(3), Some(&[][..]));
    assert_eq!(q.row(4), None);
}
