//! A small, bounds-checked reader for GGUF files (versions 2 and 3, little endian).
//!
//! Why our own reader: mmqgen only needs the header, the metadata (for `general.alignment`) and the tensor table,
//! and it reads files it did not write, so the reader treats the bytes as untrusted. Every offset and size is
//! computed with checked arithmetic, counts are never trusted for allocation (a count is checked against the
//! bytes that remain first), nested arrays are depth-limited, and every failure is a [`GgufError`] whose message
//! is one sentence naming the problem and what is allowed. The reader borrows the file: tensor data is handed out
//! as slices of the caller's buffer (e.g. a memory map), never copied.
//!
//! Layout (all little endian): magic `GGUF`, version u32, tensor count u64, metadata count u64; the metadata
//! entries (key string, value type u32, value); the tensor infos (name string, n_dims u32, dims `u64[n_dims]`,
//! ggml type u32, offset u64 relative to the data section); padding up to the alignment (`general.alignment`,
//! default 32); the data section. Strings are a u64 length and that many bytes. ggml dims are innermost first:
//! a 2-D weight matrix has `dims = [K, rows]`.

use std::collections::HashSet;
use std::fmt;

use crate::input::{escaped, shown};
use crate::q6k::{BLOCK_BYTES, BLOCK_WEIGHTS};

/// The first four bytes of every GGUF file.
pub const GGUF_MAGIC: [u8; 4] = *b"GGUF";
/// The alignment of the data section and of every tensor when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// Bytes in the fixed header (magic, version, tensor count, metadata count).
pub const HEADER_BYTES: u64 = 24;
/// The most dimensions a ggml tensor has.
pub const MAX_DIMS: u32 = 4;
/// How deep arrays of arrays may nest before the reader refuses the file (ggml itself reads none).
pub const MAX_ARRAY_DEPTH: u32 = 8;
/// ggml's `GGML_MAX_NAME`: a tensor name has fewer bytes than this (ggml keeps it in a 64-byte array with its NUL).
pub const MAX_NAME_BYTES: usize = 64;

/// Smallest possible encoded sizes, used to cap counts before allocating.
const MIN_KV_BYTES: u64 = 8 + 4 + 1;
const MIN_TENSOR_INFO_BYTES: u64 = 8 + 4 + 4 + 8;
/// How many tensor names a "no tensor named" error lists.
const NAMES_LISTED: usize = 5;

/// Everything that can be wrong with a GGUF file, or with a request for one of its tensors.
///
/// The message of each variant is one sentence: what is wrong and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GgufError {
    /// The file ends before something it declares.
    #[error("the file is truncated: {what} needs {needed} bytes but the file has {len}")]
    Truncated {
        /// What was being read, e.g. "the header".
        what: String,
        /// The file length that reading it requires.
        needed: u64,
        /// The file length.
        len: u64,
    },
    /// The file does not start with `GGUF`.
    #[error("wrong magic: a GGUF file starts with the bytes 'GGUF', this one starts with '{}'", found.escape_ascii())]
    BadMagic {
        /// The first four bytes of the file.
        found: [u8; 4],
    },
    /// A version other than 2 or 3.
    #[error("unsupported GGUF version {version}: mmqgen reads versions 2 and 3")]
    UnsupportedVersion {
        /// The version field as read (little endian).
        version: u32,
    },
    /// A big-endian file (its version field reads as 2 or 3 only when byte-swapped).
    #[error(
        "the file is a big-endian GGUF (version {} byte-swapped): mmqgen reads little-endian GGUF files only",
        version.swap_bytes()
    )]
    BigEndian {
        /// The version field as read (little endian).
        version: u32,
    },
    /// A metadata value type that GGUF does not define.
    #[error("metadata key '{key}' has value type {type_id}: GGUF value types are 0 to 12")]
    BadValueType {
        /// The key whose value (or array element) has the type.
        key: String,
        /// The type number as read.
        type_id: u32,
    },
    /// Arrays of arrays nested deeper than [`MAX_ARRAY_DEPTH`].
    #[error("metadata key '{key}' nests arrays more than {MAX_ARRAY_DEPTH} deep: mmqgen reads at most that many levels")]
    ArrayTooDeep {
        /// The key.
        key: String,
    },
    /// A key or tensor name that is not UTF-8.
    #[error("{what} is not valid UTF-8: GGUF keys and tensor names must be UTF-8")]
    NotUtf8 {
        /// Which string, e.g. "metadata key 3".
        what: String,
    },
    /// A metadata key that appears twice.
    #[error("metadata key '{key}' appears twice: each key may appear once")]
    DuplicateKey {
        /// The key.
        key: String,
    },
    /// `general.alignment` of the wrong type or value.
    #[error("general.alignment is {found}: it must be a u32 power of two")]
    BadAlignment {
        /// What it is instead (type and value).
        found: String,
    },
    /// A tensor with more than [`MAX_DIMS`] dimensions.
    #[error("tensor '{name}' has {n_dims} dimensions: a GGUF tensor has at most {MAX_DIMS}")]
    TooManyDims {
        /// The tensor.
        name: String,
        /// Its n_dims field.
        n_dims: u32,
    },
    /// A tensor name of [`MAX_NAME_BYTES`] bytes or more (ggml refuses it too).
    #[error("the name of tensor {index} is {len} bytes long ('{start}'): ggml's tensor names are shorter than {MAX_NAME_BYTES} bytes")]
    NameTooLong {
        /// 0-based position in the tensor table.
        index: u64,
        /// Its length in bytes.
        len: u64,
        /// Its first characters, as shown in sentences.
        start: String,
    },
    /// Two tensors whose data overlap (ggml lays tensors out one after the other and refuses such files).
    #[error(
        "tensors '{first}' and '{second}' overlap in the data section (bytes {first_start}..{first_end} and {second_start}..): each tensor must have bytes of its own"
    )]
    Overlap {
        /// The tensor that starts first.
        first: String,
        /// Where it starts and ends in the data section.
        first_start: u64,
        first_end: u64,
        /// The tensor that starts inside it.
        second: String,
        second_start: u64,
    },
    /// The header, metadata and tensor table do not fit in the part of the file that was read.
    #[error(
        "the header, metadata and tensor table run past the first {read} bytes of the {len}-byte file, which is all mmqgen reads of them"
    )]
    HeaderTooLarge {
        /// How many bytes were read.
        read: u64,
        /// The file length.
        len: u64,
    },
    /// A tensor name that appears twice.
    #[error("tensor name '{name}' appears twice: tensor names must be unique")]
    DuplicateTensor {
        /// The name.
        name: String,
    },
    /// Rows that are not a whole number of the type's blocks.
    #[error(
        "tensor '{name}' of type {ggml_type} has rows of {row_len} elements: rows of that type must be a multiple of {block_len}"
    )]
    PartialBlock {
        /// The tensor.
        name: String,
        /// Its type.
        ggml_type: GgmlType,
        /// Its `dims[0]`.
        row_len: u64,
        /// Elements per block of its type.
        block_len: u64,
    },
    /// A dimension ggml cannot hold: ggml keeps dimensions as signed 64-bit numbers.
    #[error(
        "tensor '{name}' has dimension {index} of {value}, more than ggml's largest, 2^63 - 1 (it keeps \
         dimensions as signed 64-bit numbers)"
    )]
    DimTooLarge {
        /// The tensor.
        name: String,
        /// Which dimension (0 is the innermost).
        index: usize,
        /// Its value.
        value: u64,
    },
    /// A shape whose element count or size in bytes does not fit in ggml's signed 64 bits.
    #[error("tensor '{name}' has shape {dims:?}, whose size does not fit in 64 bits: a tensor must fit in the file")]
    ShapeOverflow {
        /// The tensor.
        name: String,
        /// Its dims.
        dims: Vec<u64>,
    },
    /// A tensor offset that is not a multiple of the alignment.
    #[error(
        "tensor '{name}' starts at data offset {offset}, which is not a multiple of the alignment {alignment}: every tensor must be aligned"
    )]
    Misaligned {
        /// The tensor.
        name: String,
        /// Its offset in the data section.
        offset: u64,
        /// The file's alignment.
        alignment: u64,
    },
    /// Tensor data that extends past the end of the file.
    #[error(
        "tensor '{name}' data runs past the end of the file (offset {file_offset}, {n_bytes} bytes, file has {len}): the data must lie inside the file"
    )]
    DataPastEnd {
        /// The tensor.
        name: String,
        /// Where its data starts in the file (data section start + offset, saturating).
        file_offset: u64,
        /// Its size in bytes.
        n_bytes: u64,
        /// The file length.
        len: u64,
    },
    /// A tensor whose type's size mmqgen does not know, so its bytes cannot be located.
    #[error("tensor '{name}' has type {ggml_type}, whose block size mmqgen does not know: its data cannot be read")]
    UnknownSize {
        /// The tensor.
        name: String,
        /// Its type.
        ggml_type: GgmlType,
    },
    /// A tensor of another type where a q6_K one is needed.
    #[error("tensor '{name}' has type {ggml_type} but a q6_K tensor (type 14) is needed")]
    WrongType {
        /// The tensor.
        name: String,
        /// Its type.
        ggml_type: GgmlType,
    },
    /// No tensor of that name.
    #[error("no tensor named '{name}' in the file (it has {count} tensors{})", list_names(names, *count))]
    NoSuchTensor {
        /// The name asked for.
        name: String,
        /// How many tensors the file has.
        count: usize,
        /// The first few of their names.
        names: Vec<String>,
    },
}

fn list_names(names: &[String], count: usize) -> String {
    if names.is_empty() {
        return String::new();
    }
    let more = if count > names.len() { "..." } else { "" };
    format!(": {}{more}", names.join(", "))
}

/// A ggml tensor type. Named variants are the types ggml defines today; any other number is kept as `Other`.
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GgmlType {
    F32,
    F16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q8_1,
    Q2_K,
    Q3_K,
    Q4_K,
    Q5_K,
    Q6_K,
    Q8_K,
    IQ2_XXS,
    IQ2_XS,
    IQ3_XXS,
    IQ1_S,
    IQ4_NL,
    IQ3_S,
    IQ2_S,
    IQ4_XS,
    I8,
    I16,
    I32,
    I64,
    F64,
    IQ1_M,
    BF16,
    TQ1_0,
    TQ2_0,
    MXFP4,
    NVFP4,
    Q1_0,
    /// A type number mmqgen has no name for (removed types 4, 5 and 31..33, 36..38 included).
    Other(u32),
}

/// (type, number, name, elements per block, bytes per block), from ggml's type table.
const TYPE_TABLE: [(GgmlType, u32, &str, u64, u64); 34] = [
    (GgmlType::F32, 0, "F32", 1, 4),
    (GgmlType::F16, 1, "F16", 1, 2),
    (GgmlType::Q4_0, 2, "Q4_0", 32, 18),
    (GgmlType::Q4_1, 3, "Q4_1", 32, 20),
    (GgmlType::Q5_0, 6, "Q5_0", 32, 22),
    (GgmlType::Q5_1, 7, "Q5_1", 32, 24),
    (GgmlType::Q8_0, 8, "Q8_0", 32, 34),
    // ggml's block_q8_1 is two f16 and 32 int8 (36 bytes); it is a runtime-only type, never stored in files.
    (GgmlType::Q8_1, 9, "Q8_1", 32, 36),
    (GgmlType::Q2_K, 10, "Q2_K", 256, 84),
    (GgmlType::Q3_K, 11, "Q3_K", 256, 110),
    (GgmlType::Q4_K, 12, "Q4_K", 256, 144),
    (GgmlType::Q5_K, 13, "Q5_K", 256, 176),
    (GgmlType::Q6_K, 14, "Q6_K", 256, 210),
    (GgmlType::Q8_K, 15, "Q8_K", 256, 292),
    (GgmlType::IQ2_XXS, 16, "IQ2_XXS", 256, 66),
    (GgmlType::IQ2_XS, 17, "IQ2_XS", 256, 74),
    (GgmlType::IQ3_XXS, 18, "IQ3_XXS", 256, 98),
    (GgmlType::IQ1_S, 19, "IQ1_S", 256, 50),
    (GgmlType::IQ4_NL, 20, "IQ4_NL", 32, 18),
    (GgmlType::IQ3_S, 21, "IQ3_S", 256, 110),
    (GgmlType::IQ2_S, 22, "IQ2_S", 256, 82),
    (GgmlType::IQ4_XS, 23, "IQ4_XS", 256, 136),
    (GgmlType::I8, 24, "I8", 1, 1),
    (GgmlType::I16, 25, "I16", 1, 2),
    (GgmlType::I32, 26, "I32", 1, 4),
    (GgmlType::I64, 27, "I64", 1, 8),
    (GgmlType::F64, 28, "F64", 1, 8),
    (GgmlType::IQ1_M, 29, "IQ1_M", 256, 56),
    (GgmlType::BF16, 30, "BF16", 1, 2),
    (GgmlType::TQ1_0, 34, "TQ1_0", 256, 54),
    (GgmlType::TQ2_0, 35, "TQ2_0", 256, 66),
    (GgmlType::MXFP4, 39, "MXFP4", 32, 17),
    (GgmlType::NVFP4, 40, "NVFP4", 64, 36),
    (GgmlType::Q1_0, 41, "Q1_0", 128, 18),
];

impl GgmlType {
    /// The type with ggml number `id`.
    pub fn from_id(id: u32) -> Self {
        TYPE_TABLE
            .iter()
            .find(|row| row.1 == id)
            .map_or(GgmlType::Other(id), |row| row.0)
    }

    fn row(self) -> Option<&'static (GgmlType, u32, &'static str, u64, u64)> {
        TYPE_TABLE.iter().find(|row| row.0 == self)
    }

    /// The ggml type number.
    pub fn id(self) -> u32 {
        match self {
            GgmlType::Other(id) => id,
            known => known.row().map_or(u32::MAX, |row| row.1),
        }
    }

    /// ggml's name for the type (`Q6_K`, `F32`, ...), or `None` for [`GgmlType::Other`].
    pub fn name(self) -> Option<&'static str> {
        self.row().map(|row| row.2)
    }

    /// Elements per block and bytes per block, or `None` if mmqgen does not know the type.
    pub fn block_size(self) -> Option<(u64, u64)> {
        self.row().map(|row| (row.3, row.4))
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.pad(name),
            None => f.pad(&format!("unknown({})", self.id())),
        }
    }
}

/// The value types of GGUF metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GgufValueType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    F32,
    Bool,
    String,
    Array,
    U64,
    I64,
    F64,
}

impl GgufValueType {
    /// The type with GGUF number `id` (0..=12).
    pub fn from_id(id: u32) -> Option<Self> {
        use GgufValueType::*;
        Some(match id {
            0 => U8,
            1 => I8,
            2 => U16,
            3 => I16,
            4 => U32,
            5 => I32,
            6 => F32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => U64,
            11 => I64,
            12 => F64,
            _ => return None,
        })
    }

    /// Bytes of one value, for the fixed-size types.
    fn fixed_size(self) -> Option<u64> {
        use GgufValueType::*;
        match self {
            U8 | I8 | Bool => Some(1),
            U16 | I16 => Some(2),
            U32 | I32 | F32 => Some(4),
            U64 | I64 | F64 => Some(8),
            String | Array => None,
        }
    }
}

/// One metadata value, borrowing the file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GgufValue<'a> {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    /// Any non-zero byte reads as true.
    Bool(bool),
    /// The string's bytes (GGUF strings are meant to be UTF-8; see [`GgufValue::as_str`]).
    String(&'a [u8]),
    Array(GgufArray<'a>),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl<'a> GgufValue<'a> {
    /// The value's type.
    pub fn value_type(&self) -> GgufValueType {
        match self {
            GgufValue::U8(_) => GgufValueType::U8,
            GgufValue::I8(_) => GgufValueType::I8,
            GgufValue::U16(_) => GgufValueType::U16,
            GgufValue::I16(_) => GgufValueType::I16,
            GgufValue::U32(_) => GgufValueType::U32,
            GgufValue::I32(_) => GgufValueType::I32,
            GgufValue::F32(_) => GgufValueType::F32,
            GgufValue::Bool(_) => GgufValueType::Bool,
            GgufValue::String(_) => GgufValueType::String,
            GgufValue::Array(_) => GgufValueType::Array,
            GgufValue::U64(_) => GgufValueType::U64,
            GgufValue::I64(_) => GgufValueType::I64,
            GgufValue::F64(_) => GgufValueType::F64,
        }
    }

    /// The string, if this is a UTF-8 string value.
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            GgufValue::String(bytes) => std::str::from_utf8(bytes).ok(),
            _ => None,
        }
    }

    /// The value as a u64, if it is a non-negative integer of any width.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            GgufValue::U8(v) => Some(v.into()),
            GgufValue::U16(v) => Some(v.into()),
            GgufValue::U32(v) => Some(v.into()),
            GgufValue::U64(v) => Some(v),
            GgufValue::I8(v) => u64::try_from(v).ok(),
            GgufValue::I16(v) => u64::try_from(v).ok(),
            GgufValue::I32(v) => u64::try_from(v).ok(),
            GgufValue::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }
}

impl fmt::Display for GgufValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GgufValue::U8(v) => write!(f, "{v}"),
            GgufValue::I8(v) => write!(f, "{v}"),
            GgufValue::U16(v) => write!(f, "{v}"),
            GgufValue::I16(v) => write!(f, "{v}"),
            GgufValue::U32(v) => write!(f, "{v}"),
            GgufValue::I32(v) => write!(f, "{v}"),
            GgufValue::F32(v) => write!(f, "{v}"),
            GgufValue::Bool(v) => write!(f, "{v}"),
            GgufValue::String(bytes) => write!(f, "{:?}", String::from_utf8_lossy(bytes)),
            GgufValue::Array(a) => write!(f, "array of {} {:?}", a.len(), a.element_type()),
            GgufValue::U64(v) => write!(f, "{v}"),
            GgufValue::I64(v) => write!(f, "{v}"),
            GgufValue::F64(v) => write!(f, "{v}"),
        }
    }
}

/// A metadata array: its element type, length and raw bytes, already validated; elements are decoded on demand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GgufArray<'a> {
    element_type: GgufValueType,
    len: u64,
    raw: &'a [u8],
}

impl<'a> GgufArray<'a> {
    /// The type of every element.
    pub fn element_type(&self) -> GgufValueType {
        self.element_type
    }

    /// The number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoded elements, as they lie in the file.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The elements, decoded one at a time.
    pub fn iter(&self) -> impl Iterator<Item = GgufValue<'a>> + 'a {
        let mut reader = Reader::new(self.raw);
        let element_type = self.element_type;
        // The bytes were validated when the file was parsed, so decoding cannot fail; stop quietly if it did.
        (0..self.len).map_while(move |_| reader.value(element_type, "", 0).ok())
    }
}

/// One entry of the tensor table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo<'a> {
    /// The tensor's name.
    pub name: &'a str,
    /// Its ggml type.
    pub ggml_type: GgmlType,
    /// Its dims in ggml order, innermost first: `[K, rows]` for a 2-D weight matrix.
    pub dims: Vec<u64>,
    /// Offset of its data from the start of the data section.
    pub offset: u64,
    /// Its size in bytes, or `None` if mmqgen does not know its type's block size.
    pub n_bytes: Option<u64>,
}

impl TensorInfo<'_> {
    /// The number of elements (product of the dims; 1 for a tensor with no dims).
    pub fn element_count(&self) -> u64 {
        self.dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .unwrap_or(u64::MAX)
    }
}

/// A q6_K weight matrix inside a GGUF file: `rows` rows of `k` weights, each row `k / 256` blocks of 210 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Q6kTensor<'a> {
    name: &'a str,
    rows: usize,
    k: usize,
    bytes: &'a [u8],
}

impl<'a> Q6kTensor<'a> {
    /// The tensor's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// Number of rows: ggml's `ne1` for a 2-D tensor (the product of all dims after the first in general).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Weights per row: ggml's `ne0`, a multiple of 256.
    pub fn k(&self) -> usize {
        self.k
    }

    /// q6_K blocks per row.
    pub fn blocks_per_row(&self) -> usize {
        self.k / BLOCK_WEIGHTS
    }

    /// Bytes per row.
    pub fn row_bytes(&self) -> usize {
        self.blocks_per_row() * BLOCK_BYTES
    }

    /// All the blocks, row after row, as they lie in the file (`rows * row_bytes()` bytes).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The blocks of row `i`, or `None` if `i >= rows`.
    pub fn row(&self, i: usize) -> Option<&'a [u8]> {
        if i >= self.rows {
            return None;
        }
        let start = i.checked_mul(self.row_bytes())?;
        self.bytes.get(start..start.checked_add(self.row_bytes())?)
    }
}

/// A parsed GGUF file borrowing its bytes.
#[derive(Debug, Clone)]
pub struct GgufFile<'a> {
    bytes: &'a [u8],
    version: u32,
    metadata: Vec<(&'a str, GgufValue<'a>)>,
    tensors: Vec<TensorInfo<'a>>,
    alignment: u64,
    data_start: u64,
}

impl<'a> GgufFile<'a> {
    /// Parses the header, metadata and tensor table of `bytes`, checking that every tensor's data lies inside
    /// the file. Nothing is copied; tensor data is read later through [`GgufFile::tensor_data`].
    pub fn parse(bytes: &'a [u8]) -> Result<Self, GgufError> {
        Self::parse_prefix(bytes, bytes.len() as u64)
    }

    /// [`GgufFile::parse`] on the first bytes of a file of `file_len` bytes (at least `bytes.len()`): enough
    /// for the header, metadata and tensor table, which is all `gguf ls` needs, so that a large model is never
    /// read whole. Tensor data past the prefix cannot be read through the result.
    pub fn parse_prefix(bytes: &'a [u8], file_len: u64) -> Result<Self, GgufError> {
        let read = bytes.len() as u64;
        let file_len = file_len.max(read);
        Self::parse_table(bytes, file_len).map_err(|e| match e {
            GgufError::Truncated { .. } if read < file_len => GgufError::HeaderTooLarge {
                read,
                len: file_len,
            },
            other => other,
        })
    }

    fn parse_table(bytes: &'a [u8], len: u64) -> Result<Self, GgufError> {
        let mut r = Reader::new(bytes);

        // Header. Check the magic and the version before insisting on a whole header, so that a short file of
        // another kind gets the sentence that names it.
        if let Some(found) = bytes.first_chunk::<4>() {
            if *found != GGUF_MAGIC {
                return Err(GgufError::BadMagic { found: *found });
            }
        }
        if let Some(v) = bytes.get(4..8).and_then(|v| v.first_chunk::<4>()) {
            let version = u32::from_le_bytes(*v);
            if version != 2 && version != 3 {
                let swapped = version.swap_bytes();
                return Err(if swapped == 2 || swapped == 3 {
                    GgufError::BigEndian { version }
                } else {
                    GgufError::UnsupportedVersion { version }
                });
            }
        }
        if (bytes.len() as u64) < HEADER_BYTES {
            return Err(GgufError::Truncated {
                what: "the header".into(),
                needed: HEADER_BYTES,
                len,
            });
        }
        r.take(4, || "the magic".into())?;
        let version = r.u32(|| "the version".into())?;
        let tensor_count = r.u64(|| "the tensor count".into())?;
        let kv_count = r.u64(|| "the metadata count".into())?;

        // Metadata.
        let mut metadata = Vec::with_capacity(capped(kv_count, r.remaining(), MIN_KV_BYTES));
        let mut keys = HashSet::new();
        for i in 0..kv_count {
            let key_bytes = r.string(|| format!("metadata entry {i} of {kv_count}"))?;
            let key = std::str::from_utf8(key_bytes).map_err(|_| GgufError::NotUtf8 {
                what: format!("metadata key {i}"),
            })?;
            if !keys.insert(key) {
                return Err(GgufError::DuplicateKey { key: shown(key) });
            }
            let type_id = r.u32(|| format!("the type of metadata key '{}'", shown(key)))?;
            let value_type =
                GgufValueType::from_id(type_id).ok_or_else(|| GgufError::BadValueType {
                    key: shown(key),
                    type_id,
                })?;
            let value = r.value(value_type, key, 0)?;
            metadata.push((key, value));
        }

        let alignment = match metadata.iter().find(|(k, _)| *k == "general.alignment") {
            None => DEFAULT_ALIGNMENT,
            Some((_, GgufValue::U32(a))) if a.is_power_of_two() => u64::from(*a),
            Some((_, value)) => {
                return Err(GgufError::BadAlignment {
                    found: match value {
                        GgufValue::String(b) => {
                            format!("String \"{}\"", crate::input::shown_bytes(b))
                        }
                        other => format!("{:?} {other}", other.value_type()),
                    },
                })
            }
        };

        // Tensor infos.
        let mut tensors =
            Vec::with_capacity(capped(tensor_count, r.remaining(), MIN_TENSOR_INFO_BYTES));
        let mut names = HashSet::new();
        for i in 0..tensor_count {
            let name_len = r.peek_u64().unwrap_or(0);
            if name_len >= MAX_NAME_BYTES as u64 {
                // Refused before it is read, like ggml; the sentence shows only its start.
                let start = r.pos.saturating_add(8);
                let shown_end = start.saturating_add(4 * 64).min(bytes.len());
                return Err(GgufError::NameTooLong {
                    index: i,
                    len: name_len,
                    start: crate::input::shown_bytes(bytes.get(start..shown_end).unwrap_or(&[])),
                });
            }
            let name_bytes = r.string(|| format!("tensor info {i} of {tensor_count}"))?;
            let name = std::str::from_utf8(name_bytes).map_err(|_| GgufError::NotUtf8 {
                what: format!("the name of tensor {i}"),
            })?;
            if !names.insert(name) {
                return Err(GgufError::DuplicateTensor { name: shown(name) });
            }
            let n_dims = r.u32(|| format!("the dimension count of tensor '{}'", shown(name)))?;
            if n_dims > MAX_DIMS {
                return Err(GgufError::TooManyDims {
                    name: shown(name),
                    n_dims,
                });
            }
            let mut dims = Vec::with_capacity(n_dims as usize);
            for d in 0..n_dims {
                dims.push(r.u64(|| format!("dimension {d} of tensor '{}'", shown(name)))?);
            }
            let ggml_type =
                GgmlType::from_id(r.u32(|| format!("the type of tensor '{}'", shown(name)))?);
            let offset = r.u64(|| format!("the offset of tensor '{}'", shown(name)))?;
            let n_bytes = tensor_bytes(name, ggml_type, &dims)?;
            tensors.push(TensorInfo {
                name,
                ggml_type,
                dims,
                offset,
                n_bytes,
            });
        }

        // Data section, and every tensor inside it.
        let info_end = r.pos as u64;
        let data_start = info_end
            .checked_next_multiple_of(alignment)
            .ok_or_else(|| GgufError::Truncated {
                what: "the data section".into(),
                needed: u64::MAX,
                len,
            })?;
        for t in &tensors {
            if t.offset % alignment != 0 {
                return Err(GgufError::Misaligned {
                    name: shown(t.name),
                    offset: t.offset,
                    alignment,
                });
            }
            if let Some(n_bytes) = t.n_bytes {
                let start = data_start.checked_add(t.offset);
                if start
                    .and_then(|s| s.checked_add(n_bytes))
                    .is_none_or(|end| end > len)
                {
                    return Err(GgufError::DataPastEnd {
                        name: shown(t.name),
                        file_offset: start.unwrap_or(u64::MAX),
                        n_bytes,
                        len,
                    });
                }
            }
        }

        // No two tensors may share bytes (ggml places each after the previous one and refuses anything else).
        // A tensor whose size is unknown (a type mmqgen has no size for) has no extent to compare.
        let mut spans: Vec<(u64, u64, &str)> = tensors
            .iter()
            .filter_map(|t| Some((t.offset, t.n_bytes?, t.name)))
            .filter(|&(_, n, _)| n > 0)
            .collect();
        spans.sort_unstable();
        let mut last: Option<(u64, u64, &str)> = None;
        for (start, n, name) in spans {
            let end = start.saturating_add(n);
            if let Some((first_start, first_end, first)) = last {
                if start < first_end {
                    return Err(GgufError::Overlap {
                        first: shown(first),
                        first_start,
                        first_end,
                        second: shown(name),
                        second_start: start,
                    });
                }
            }
            if last.is_none_or(|(_, e, _)| end > e) {
                last = Some((start, end, name));
            }
        }

        Ok(GgufFile {
            bytes,
            version,
            metadata,
            tensors,
            alignment,
            data_start,
        })
    }

    /// The GGUF version (2 or 3).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The alignment of the data section and of every tensor in it.
    pub fn alignment(&self) -> u64 {
        self.alignment
    }

    /// Where the data section starts in the file.
    pub fn data_start(&self) -> u64 {
        self.data_start
    }

    /// All metadata entries, in file order.
    pub fn metadata(&self) -> &[(&'a str, GgufValue<'a>)] {
        &self.metadata
    }

    /// The metadata value for `key`, if present.
    pub fn get(&self, key: &str) -> Option<&GgufValue<'a>> {
        self.metadata
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// The tensor table, in file order.
    pub fn tensors(&self) -> &[TensorInfo<'a>] {
        &self.tensors
    }

    /// The tensor info for `name`.
    pub fn tensor(&self, name: &str) -> Result<&TensorInfo<'a>, GgufError> {
        self.tensors
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| GgufError::NoSuchTensor {
                name: shown(name),
                count: self.tensors.len(),
                names: self
                    .tensors
                    .iter()
                    .take(NAMES_LISTED)
                    .map(|t| shown(t.name))
                    .collect(),
            })
    }

    /// The bytes of tensor `name`, borrowed from the file.
    pub fn tensor_data(&self, name: &str) -> Result<&'a [u8], GgufError> {
        let t = self.tensor(name)?;
        let n_bytes = t.n_bytes.ok_or_else(|| GgufError::UnknownSize {
            name: shown(name),
            ggml_type: t.ggml_type,
        })?;
        let len = self.bytes.len() as u64;
        let past_end = || GgufError::DataPastEnd {
            name: shown(name),
            file_offset: self.data_start.saturating_add(t.offset),
            n_bytes,
            len,
        };
        // Checked at parse time already; checked again so that this can never index out of bounds.
        let start = self.data_start.checked_add(t.offset).ok_or_else(past_end)?;
        let end = start.checked_add(n_bytes).ok_or_else(past_end)?;
        let start = usize::try_from(start).map_err(|_| past_end())?;
        let end = usize::try_from(end).map_err(|_| past_end())?;
        self.bytes.get(start..end).ok_or_else(past_end)
    }

    /// The q6_K weight matrix `name`: its rows, its K (a multiple of 256) and its blocks.
    pub fn q6k_tensor(&self, name: &str) -> Result<Q6kTensor<'a>, GgufError> {
        let t = self.tensor(name)?;
        if t.ggml_type != GgmlType::Q6_K {
            return Err(GgufError::WrongType {
                name: shown(name),
                ggml_type: t.ggml_type,
            });
        }
        let bytes = self.tensor_data(name)?;
        // The parse checked that dims[0] is a multiple of 256 and that the data (whose size is
        // rows * k / 256 * 210) lies in the buffer, so both fit in usize.
        let overflow = || GgufError::ShapeOverflow {
            name: shown(name),
            dims: t.dims.clone(),
        };
        let k = t.dims.first().copied().unwrap_or(1);
        let rows = t
            .dims
            .iter()
            .skip(1)
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .ok_or_else(overflow)?;
        Ok(Q6kTensor {
            name: t.name,
            rows: usize::try_from(rows).map_err(|_| overflow())?,
            k: usize::try_from(k).map_err(|_| overflow())?,
            bytes,
        })
    }

    /// One line for the file (version, counts, alignment), as `mmqgen gguf ls` prints it first.
    pub fn summary(&self) -> String {
        format!(
            "GGUF v{}, {} tensors, {} metadata keys, alignment {}, data at byte {}",
            self.version,
            self.tensors.len(),
            self.metadata.len(),
            self.alignment,
            self.data_start
        )
    }

    /// One line per tensor, in file order: name, type, shape (ggml order, innermost first) and size in bytes,
    /// in aligned columns, as `mmqgen gguf ls` prints them.
    pub fn describe_tensors(&self) -> Vec<String> {
        let shapes: Vec<String> = self
            .tensors
            .iter()
            .map(|t| {
                format!(
                    "[{}]",
                    t.dims
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect();
        let name_w = self
            .tensors
            .iter()
            .map(|t| escaped(t.name).chars().count())
            .max()
            .unwrap_or(0);
        let type_w = self
            .tensors
            .iter()
            .map(|t| t.ggml_type.to_string().len())
            .max()
            .unwrap_or(0);
        let shape_w = shapes.iter().map(String::len).max().unwrap_or(0);
        self.tensors
            .iter()
            .zip(&shapes)
            .map(|(t, shape)| {
                let size = t
                    .n_bytes
                    .map_or_else(|| "? bytes".to_string(), |n| format!("{n} bytes"));
                format!(
                    "{:<name_w$}  {:<type_w$}  {:<shape_w$}  {size}",
                    escaped(t.name),
                    t.ggml_type,
                    shape
                )
            })
            .collect()
    }
}

/// How many entries to reserve for `count` items of at least `min_bytes` each when `remaining` bytes are left.
fn capped(count: u64, remaining: usize, min_bytes: u64) -> usize {
    usize::try_from(count.min(remaining as u64 / min_bytes)).unwrap_or(0)
}

/// The size in bytes of a tensor (None for a type of unknown block size), checking rows are whole blocks.
fn tensor_bytes(name: &str, ggml_type: GgmlType, dims: &[u64]) -> Result<Option<u64>, GgufError> {
    // ggml refuses these whatever the type, so they are refused before the type is looked at.
    if let Some((index, &value)) = dims.iter().enumerate().find(|(_, &d)| d > i64::MAX as u64) {
        return Err(GgufError::DimTooLarge {
            name: shown(name),
            index,
            value,
        });
    }
    let overflow = || GgufError::ShapeOverflow {
        name: shown(name),
        dims: dims.to_vec(),
    };
    // Like ggml, the element count must fit in a signed 64-bit number, even where the byte count would.
    dims.iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= i64::MAX as u64)
        .ok_or_else(overflow)?;
    let Some((block_len, block_bytes)) = ggml_type.block_size() else {
        return Ok(None);
    };
    let row_len = dims.first().copied().unwrap_or(1);
    if row_len % block_len != 0 {
        return Err(GgufError::PartialBlock {
            name: shown(name),
            ggml_type,
            row_len,
            block_len,
        });
    }
    let row_bytes = (row_len / block_len)
        .checked_mul(block_bytes)
        .ok_or_else(overflow)?;
    dims.iter()
        .skip(1)
        .try_fold(row_bytes, |acc, &d| acc.checked_mul(d))
        .map(Some)
        .ok_or_else(overflow)
}

/// A cursor over the file that never reads past its end.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// The next `n` bytes, or a truncation error naming `what`.
    fn take(&mut self, n: u64, what: impl FnOnce() -> String) -> Result<&'a [u8], GgufError> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|&end| end <= self.bytes.len());
        match end {
            Some(end) => {
                let out = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(out)
            }
            None => Err(GgufError::Truncated {
                what: what(),
                needed: (self.pos as u64).saturating_add(n),
                len: self.bytes.len() as u64,
            }),
        }
    }

    fn array<const N: usize>(
        &mut self,
        what: impl FnOnce() -> String,
    ) -> Result<[u8; N], GgufError> {
        let bytes = self.take(N as u64, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    fn u32(&mut self, what: impl FnOnce() -> String) -> Result<u32, GgufError> {
        self.array(what).map(u32::from_le_bytes)
    }

    /// The next u64 without moving past it, if the file has 8 more bytes.
    fn peek_u64(&self) -> Option<u64> {
        let end = self.pos.checked_add(8)?;
        let bytes: [u8; 8] = self.bytes.get(self.pos..end)?.try_into().ok()?;
        Some(u64::from_le_bytes(bytes))
    }

    fn u64(&mut self, what: impl FnOnce() -> String) -> Result<u64, GgufError> {
        self.array(what).map(u64::from_le_bytes)
    }

    fn string(&mut self, what: impl Fn() -> String) -> Result<&'a [u8], GgufError> {
        let n = self.u64(|| format!("the length of {}", what()))?;
        self.take(n, || format!("the {n}-byte string of {}", what()))
    }

    /// One value of type `ty` for metadata key `key`, arrays nested `depth` deep so far.
    fn value(
        &mut self,
        ty: GgufValueType,
        key: &str,
        depth: u32,
    ) -> Result<GgufValue<'a>, GgufError> {
        let what = || format!("the value of metadata key '{}'", shown(key));
        Ok(match ty {
            GgufValueType::U8 => GgufValue::U8(u8::from_le_bytes(self.array(what)?)),
            GgufValueType::I8 => GgufValue::I8(i8::from_le_bytes(self.array(what)?)),
            GgufValueType::U16 => GgufValue::U16(u16::from_le_bytes(self.array(what)?)),
            GgufValueType::I16 => GgufValue::I16(i16::from_le_bytes(self.array(what)?)),
            GgufValueType::U32 => GgufValue::U32(u32::from_le_bytes(self.array(what)?)),
            GgufValueType::I32 => GgufValue::I32(i32::from_le_bytes(self.array(what)?)),
            GgufValueType::F32 => GgufValue::F32(f32::from_le_bytes(self.array(what)?)),
            GgufValueType::Bool => GgufValue::Bool(u8::from_le_bytes(self.array(what)?) != 0),
            GgufValueType::String => GgufValue::String(self.string(what)?),
            GgufValueType::U64 => GgufValue::U64(u64::from_le_bytes(self.array(what)?)),
            GgufValueType::I64 => GgufValue::I64(i64::from_le_bytes(self.array(what)?)),
            GgufValueType::F64 => GgufValue::F64(f64::from_le_bytes(self.array(what)?)),
            GgufValueType::Array => {
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(GgufError::ArrayTooDeep { key: shown(key) });
                }
                let type_id =
                    self.u32(|| format!("the element type of metadata key '{}'", shown(key)))?;
                let element_type =
                    GgufValueType::from_id(type_id).ok_or_else(|| GgufError::BadValueType {
                        key: shown(key),
                        type_id,
                    })?;
                let len = self.u64(|| format!("the length of metadata key '{}'", shown(key)))?;
                let start = self.pos;
                match element_type.fixed_size() {
                    Some(size) => {
                        let n = len.saturating_mul(size);
                        self.take(n, || {
                            format!("the {len} elements of metadata key '{}'", shown(key))
                        })?;
                    }
                    None => {
                        // Strings and arrays: each takes at least 8 bytes, so a bogus length ends at the file's end.
                        for _ in 0..len {
                            self.value(element_type, key, depth + 1)?;
                        }
                    }
                }
                GgufValue::Array(GgufArray {
                    element_type,
                    len,
                    raw: &self.bytes[start..self.pos],
                })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_table_round_trips() {
        for row in TYPE_TABLE {
            assert_eq!(GgmlType::from_id(row.1), row.0);
            assert_eq!(row.0.id(), row.1);
            assert_eq!(row.0.to_string(), row.2);
        }
        assert_eq!(GgmlType::from_id(14), GgmlType::Q6_K);
        let q6k = (BLOCK_WEIGHTS as u64, BLOCK_BYTES as u64);
        assert_eq!(GgmlType::Q6_K.block_size(), Some(q6k));
        assert_eq!(GgmlType::from_id(4), GgmlType::Other(4));
        assert_eq!(GgmlType::Other(99).to_string(), "unknown(99)");
        assert_eq!(GgmlType::Other(99).block_size(), None);
    }

    #[test]
    fn tensor_bytes_checks_blocks_and_overflow() {
        assert_eq!(
            tensor_bytes("w", GgmlType::Q6_K, &[512, 4]),
            Ok(Some(4 * 2 * 210))
        );
        assert_eq!(tensor_bytes("w", GgmlType::F32, &[]), Ok(Some(4)));
        assert_eq!(tensor_bytes("w", GgmlType::Other(77), &[3]), Ok(None));
        assert!(matches!(
            tensor_bytes("w", GgmlType::Q6_K, &[100, 4]),
            Err(GgufError::PartialBlock { .. })
        ));
        assert!(matches!(
            tensor_bytes("w", GgmlType::F32, &[1 << 62, 8]),
            Err(GgufError::ShapeOverflow { .. })
        ));
    }

    /// ggml keeps dimensions as int64_t: a dimension of 2^63 or more, or an element count past 2^63 - 1, is
    /// refused whatever the type (an unknown type included), as ggml's reader refuses it.
    #[test]
    fn dimensions_past_signed_64_bits_are_refused() {
        for ggml_type in [GgmlType::F32, GgmlType::Q6_K, GgmlType::Other(77)] {
            let e = tensor_bytes("w", ggml_type, &[256, 1 << 63]).unwrap_err();
            assert!(
                matches!(
                    e,
                    GgufError::DimTooLarge {
                        index: 1,
                        value: 0x8000_0000_0000_0000,
                        ..
                    }
                ),
                "{e:?}"
            );
            assert!(e.to_string().contains("2^63 - 1"), "{e}");
            let e = tensor_bytes("w", ggml_type, &[u64::MAX]).unwrap_err();
            assert!(
                matches!(e, GgufError::DimTooLarge { index: 0, .. }),
                "{e:?}"
            );
            // Each dimension fits, their product does not.
            let e = tensor_bytes("w", ggml_type, &[1 << 32, 1 << 31]).unwrap_err();
            assert!(matches!(e, GgufError::ShapeOverflow { .. }), "{e:?}");
        }
        assert_eq!(
            tensor_bytes("w", GgmlType::Other(77), &[(1 << 63) - 1]),
            Ok(None)
        );
    }
}
