//! One row of the parity report: its status and counts, as JSON (`--json`) and as the line a parity child
//! prints for its parent.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use mmqgen_codegen::{canonical_name, VariantDescription};
use serde::{Deserialize, Serialize};

use super::case::{ParityCase, Shape};
use super::compare::FirstBad;
use super::gguf::GgufTensorRef;
use crate::gpu::weights::Layout;

/// The outcome of one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every compared output and quantized activation is bit-identical and every output was written.
    Pass,
    /// Some output or activation differs, or was never written.
    Mismatch,
    /// The case could not run (render, compile, load, launch, a kernel fault, a crashed child).
    Failed,
    /// The variant does not target this GPU's architecture.
    Skipped,
}

impl Status {
    pub const fn keyword(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Mismatch => "MISMATCH",
            Status::Failed => "FAILED",
            Status::Skipped => "skipped",
        }
    }

    /// Whether the case counts against the run (mismatch or failure).
    pub const fn is_bad(self) -> bool {
        matches!(self, Status::Mismatch | Status::Failed)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

impl FromStr for Status {
    type Err = String;
    fn from_str(s: &str) -> Result<Status, String> {
        [
            Status::Pass,
            Status::Mismatch,
            Status::Failed,
            Status::Skipped,
        ]
        .into_iter()
        .find(|st| st.keyword() == s)
        .ok_or_else(|| format!("'{s}' is not a parity status"))
    }
}

/// One row of the parity report.
#[derive(Clone, Debug, PartialEq)]
pub struct ParityRow {
    /// Declared name.
    pub variant: String,
    pub canonical: String,
    pub mode: String,
    pub layout: Layout,
    pub shape: Shape,
    pub seed: u64,
    /// The mutant planted in the variant's source (`mmqgen parity --mutants`), if any.
    pub mutant: Option<String>,
    /// The GGUF tensor the weights came from (`None`: seeded random blocks).
    pub gguf: Option<GgufTensorRef>,
    pub status: Status,
    /// Whether the case failed because a kernel faulted (the driver reported an error that ends the context).
    pub kernel_fault: bool,
    /// Whether every output was compared with the CPU reference (else a sample).
    pub full: bool,
    /// Outputs compared with the CPU reference, and how many differed.
    pub checked: usize,
    pub mismatches: usize,
    /// Outputs that still held the poison pattern (all outputs are scanned).
    pub unwritten: usize,
    pub first_bad: Option<FirstBad>,
    /// The variant whose output every output was compared with (sampled shapes), and the result.
    pub proven_by: Option<String>,
    pub proven_checked: usize,
    pub proven_mismatches: usize,
    pub proven_first_bad: Option<FirstBad>,
    /// Quantized activations (quants and scales) compared, and how many differed.
    pub quant_checked: usize,
    pub quant_mismatches: usize,
    pub quant_first_bad: Option<String>,
    /// `mmqgen_reference::digest` of the GPU's whole output (when the case ran to the end).
    pub digest: Option<String>,
    /// Wall time of the whole case (build, inputs, launch, reference, comparison), and of the three kernels
    /// from the first launch to the last synchronisation.
    pub wall_ms: f64,
    pub kernels_ms: f64,
    /// Why the case failed or was skipped.
    pub error: Option<String>,
}

/// The prefix of the line a parity child prints its row on.
pub const ROW_LINE_PREFIX: &str = "mmqgen-parity-row";

/// The field names of a [`FirstBad`] in the result line, for the reference comparison and for the proven one.
const FIRST_BAD_KEYS: [&str; 5] = [
    "first_bad_index",
    "first_bad_token",
    "first_bad_row",
    "first_bad_expected",
    "first_bad_got",
];
const PROVEN_FIRST_BAD_KEYS: [&str; 5] = [
    "proven_first_bad_index",
    "proven_first_bad_token",
    "proven_first_bad_row",
    "proven_first_bad_expected",
    "proven_first_bad_got",
];

/// A first bad output as the five fields named by `keys` (index, token, row, expected and got bits), null when
/// there is none.
fn first_bad_fields(keys: &[&'static str; 5], bad: Option<FirstBad>) -> [(&'static str, Value); 5] {
    let value = |f: fn(&FirstBad) -> Value| bad.as_ref().map_or(Value::Null, f);
    [
        (keys[0], value(|b| Value::Num(b.index.to_string()))),
        (keys[1], value(|b| Value::Num(b.token.to_string()))),
        (keys[2], value(|b| Value::Num(b.row.to_string()))),
        (keys[3], value(|b| Value::Str(hex_bits(b.expected_bits)))),
        (keys[4], value(|b| Value::Str(hex_bits(b.got_bits)))),
    ]
}

impl ParityRow {
    /// An empty row for `desc` and `case` (status `Failed` until filled in).
    pub fn new(desc: &VariantDescription, case: &ParityCase) -> ParityRow {
        ParityRow {
            variant: desc.name.to_string(),
            canonical: canonical_name(desc),
            mode: desc.mode.keyword().to_string(),
            layout: case.layout,
            shape: case.shape,
            seed: case.seed,
            mutant: case.mutant.clone(),
            gguf: None,
            status: Status::Failed,
            kernel_fault: false,
            full: case.shape.compares_every_output(),
            checked: 0,
            mismatches: 0,
            unwritten: 0,
            first_bad: None,
            proven_by: None,
            proven_checked: 0,
            proven_mismatches: 0,
            proven_first_bad: None,
            quant_checked: 0,
            quant_mismatches: 0,
            quant_first_bad: None,
            digest: None,
            wall_ms: 0.0,
            kernels_ms: 0.0,
            error: None,
        }
    }

    /// The status the counts imply (for a case that ran to the end).
    pub fn status_from_counts(&self) -> Status {
        if self.mismatches + self.unwritten + self.proven_mismatches + self.quant_mismatches > 0 {
            Status::Mismatch
        } else {
            Status::Pass
        }
    }

    /// The earliest bad output against the reference or the proven variant.
    pub fn any_first_bad(&self) -> Option<FirstBad> {
        match (self.first_bad, self.proven_first_bad) {
            (Some(a), Some(b)) => Some(if b.index < a.index { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    fn fields(&self) -> Vec<(&'static str, Value)> {
        use Value::*;
        let opt = |s: &Option<String>| s.clone().map(Str).unwrap_or(Null);
        let mut fields = vec![
            ("variant", Str(self.variant.clone())),
            ("canonical", Str(self.canonical.clone())),
            ("mode", Str(self.mode.clone())),
            ("layout", Str(self.layout.keyword().into())),
            ("m", Num(self.shape.m.to_string())),
            ("n", Num(self.shape.n.to_string())),
            ("k", Num(self.shape.k.to_string())),
            ("seed", Num(self.seed.to_string())),
            ("mutant", opt(&self.mutant)),
            (
                "gguf",
                self.gguf
                    .as_ref()
                    .map_or(Null, |g| Str(g.path.display().to_string())),
            ),
            (
                "tensor",
                self.gguf.as_ref().map_or(Null, |g| Str(g.tensor.clone())),
            ),
            ("status", Str(self.status.keyword().into())),
            ("kernel_fault", Bool(self.kernel_fault)),
            ("full", Bool(self.full)),
            ("checked", Num(self.checked.to_string())),
            ("mismatches", Num(self.mismatches.to_string())),
            ("unwritten", Num(self.unwritten.to_string())),
        ];
        fields.extend(first_bad_fields(&FIRST_BAD_KEYS, self.first_bad));
        fields.extend([
            ("proven_by", opt(&self.proven_by)),
            ("proven_checked", Num(self.proven_checked.to_string())),
            ("proven_mismatches", Num(self.proven_mismatches.to_string())),
        ]);
        fields.extend(first_bad_fields(
            &PROVEN_FIRST_BAD_KEYS,
            self.proven_first_bad,
        ));
        fields.extend([
            ("quant_checked", Num(self.quant_checked.to_string())),
            ("quant_mismatches", Num(self.quant_mismatches.to_string())),
            ("quant_first_bad", opt(&self.quant_first_bad)),
            ("digest", opt(&self.digest)),
            ("wall_ms", Num(format!("{:.3}", finite(self.wall_ms)))),
            ("kernels_ms", Num(format!("{:.3}", finite(self.kernels_ms)))),
            ("error", opt(&self.error)),
        ]);
        fields
    }

    /// One JSON object (for `--json`), written by serde_json from [`ParityRowJson`].
    pub fn to_json(&self) -> String {
        serde_json::to_string(&ParityRowJson::from(self))
            .expect("a parity row has only strings, numbers, booleans and nulls")
    }

    /// Reads an object written by [`Self::to_json`] back.
    pub fn from_json(text: &str) -> Result<ParityRow, String> {
        let json: ParityRowJson =
            serde_json::from_str(text).map_err(|e| format!("not a parity row: {e}"))?;
        ParityRow::try_from(json)
    }

    /// The one line a parity child prints: [`ROW_LINE_PREFIX`], then tab-separated `key=value` fields
    /// (backslash, tab, CR and LF escaped; absent values left out).
    pub fn encode(&self) -> String {
        let mut line = ROW_LINE_PREFIX.to_string();
        for (k, v) in self.fields() {
            let v = match v {
                Value::Str(s) | Value::Num(s) => s,
                Value::Bool(b) => b.to_string(),
                Value::Null => continue,
            };
            line.push('\t');
            line.push_str(k);
            line.push('=');
            line.push_str(&escape(&v));
        }
        line
    }

    /// Parses a line made by [`Self::encode`].
    pub fn decode(line: &str) -> Result<ParityRow, String> {
        let rest = line
            .strip_prefix(ROW_LINE_PREFIX)
            .ok_or_else(|| format!("the line does not start with '{ROW_LINE_PREFIX}'"))?;
        let mut map = BTreeMap::new();
        for field in rest.split('\t').filter(|f| !f.is_empty()) {
            let (k, v) = field
                .split_once('=')
                .ok_or_else(|| format!("the field '{field}' of the result line has no '='"))?;
            map.insert(k.to_string(), unescape(v));
        }
        let get = |k: &str| -> Result<&String, String> {
            map.get(k)
                .ok_or_else(|| format!("the result line has no field '{k}'"))
        };
        fn num<T: FromStr>(map: &BTreeMap<String, String>, k: &str) -> Result<T, String> {
            let v = map
                .get(k)
                .ok_or_else(|| format!("the result line has no field '{k}'"))?;
            v.parse()
                .map_err(|_| format!("the result line's field '{k}' = '{v}' is not a number"))
        }
        let first_bad = |keys: &[&str; 5]| -> Result<Option<FirstBad>, String> {
            if !map.contains_key(keys[0]) {
                return Ok(None);
            }
            Ok(Some(FirstBad {
                index: num(&map, keys[0])?,
                token: num(&map, keys[1])?,
                row: num(&map, keys[2])?,
                expected_bits: parse_bits(get(keys[3])?)?,
                got_bits: parse_bits(get(keys[4])?)?,
            }))
        };
        Ok(ParityRow {
            variant: get("variant")?.clone(),
            canonical: get("canonical")?.clone(),
            mode: get("mode")?.clone(),
            layout: get("layout")?.parse()?,
            shape: Shape::new(num(&map, "m")?, num(&map, "n")?, num(&map, "k")?),
            seed: num(&map, "seed")?,
            mutant: map.get("mutant").cloned(),
            gguf: match (map.get("gguf"), map.get("tensor")) {
                (Some(path), Some(tensor)) => Some(GgufTensorRef {
                    path: PathBuf::from(path),
                    tensor: tensor.clone(),
                }),
                (None, None) => None,
                _ => return Err(
                    "the result line has one of the fields 'gguf' and 'tensor' but not the other"
                        .to_string(),
                ),
            },
            status: get("status")?.parse()?,
            kernel_fault: num(&map, "kernel_fault")?,
            full: num(&map, "full")?,
            checked: num(&map, "checked")?,
            mismatches: num(&map, "mismatches")?,
            unwritten: num(&map, "unwritten")?,
            first_bad: first_bad(&FIRST_BAD_KEYS)?,
            proven_by: map.get("proven_by").cloned(),
            proven_checked: num(&map, "proven_checked")?,
            proven_mismatches: num(&map, "proven_mismatches")?,
            proven_first_bad: first_bad(&PROVEN_FIRST_BAD_KEYS)?,
            quant_checked: num(&map, "quant_checked")?,
            quant_mismatches: num(&map, "quant_mismatches")?,
            quant_first_bad: map.get("quant_first_bad").cloned(),
            digest: map.get("digest").cloned(),
            wall_ms: num(&map, "wall_ms")?,
            kernels_ms: num(&map, "kernels_ms")?,
            error: map.get("error").cloned(),
        })
    }
}

/// A parity row as its `--json` object: one key per [`ParityRow`] field, the first differences spelled out
/// (index, token, row, both bit patterns as `0x` hex), the GGUF source as `gguf` and `tensor`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParityRowJson {
    pub variant: String,
    pub canonical: String,
    pub mode: String,
    pub layout: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub seed: u64,
    pub mutant: Option<String>,
    pub gguf: Option<String>,
    pub tensor: Option<String>,
    pub status: String,
    pub kernel_fault: bool,
    pub full: bool,
    pub checked: usize,
    pub mismatches: usize,
    pub unwritten: usize,
    pub first_bad_index: Option<usize>,
    pub first_bad_token: Option<usize>,
    pub first_bad_row: Option<usize>,
    pub first_bad_expected: Option<String>,
    pub first_bad_got: Option<String>,
    pub proven_by: Option<String>,
    pub proven_checked: usize,
    pub proven_mismatches: usize,
    pub proven_first_bad_index: Option<usize>,
    pub proven_first_bad_token: Option<usize>,
    pub proven_first_bad_row: Option<usize>,
    pub proven_first_bad_expected: Option<String>,
    pub proven_first_bad_got: Option<String>,
    pub quant_checked: usize,
    pub quant_mismatches: usize,
    pub quant_first_bad: Option<String>,
    pub digest: Option<String>,
    pub wall_ms: f64,
    pub kernels_ms: f64,
    pub error: Option<String>,
}

/// A time in milliseconds as the row shows it: to the microsecond, 0 when not finite.
fn ms(v: f64) -> f64 {
    (finite(v) * 1000.0).round() / 1000.0
}

fn hex_bits(bits: u32) -> String {
    format!("{bits:#010x}")
}

fn parse_bits(v: &str) -> Result<u32, String> {
    u32::from_str_radix(v.trim_start_matches("0x"), 16)
        .map_err(|_| format!("'{v}' is not a bit pattern"))
}

impl From<&ParityRow> for ParityRowJson {
    fn from(r: &ParityRow) -> ParityRowJson {
        let (fb, pb) = (r.first_bad.as_ref(), r.proven_first_bad.as_ref());
        ParityRowJson {
            variant: r.variant.clone(),
            canonical: r.canonical.clone(),
            mode: r.mode.clone(),
            layout: r.layout.keyword().to_string(),
            m: r.shape.m,
            n: r.shape.n,
            k: r.shape.k,
            seed: r.seed,
            mutant: r.mutant.clone(),
            gguf: r.gguf.as_ref().map(|g| g.path.display().to_string()),
            tensor: r.gguf.as_ref().map(|g| g.tensor.clone()),
            status: r.status.keyword().to_string(),
            kernel_fault: r.kernel_fault,
            full: r.full,
            checked: r.checked,
            mismatches: r.mismatches,
            unwritten: r.unwritten,
            first_bad_index: fb.map(|b| b.index),
            first_bad_token: fb.map(|b| b.token),
            first_bad_row: fb.map(|b| b.row),
            first_bad_expected: fb.map(|b| hex_bits(b.expected_bits)),
            first_bad_got: fb.map(|b| hex_bits(b.got_bits)),
            proven_by: r.proven_by.clone(),
            proven_checked: r.proven_checked,
            proven_mismatches: r.proven_mismatches,
            proven_first_bad_index: pb.map(|b| b.index),
            proven_first_bad_token: pb.map(|b| b.token),
            proven_first_bad_row: pb.map(|b| b.row),
            proven_first_bad_expected: pb.map(|b| hex_bits(b.expected_bits)),
            proven_first_bad_got: pb.map(|b| hex_bits(b.got_bits)),
            quant_checked: r.quant_checked,
            quant_mismatches: r.quant_mismatches,
            quant_first_bad: r.quant_first_bad.clone(),
            digest: r.digest.clone(),
            wall_ms: ms(r.wall_ms),
            kernels_ms: ms(r.kernels_ms),
            error: r.error.clone(),
        }
    }
}

impl TryFrom<ParityRowJson> for ParityRow {
    type Error = String;
    fn try_from(j: ParityRowJson) -> Result<ParityRow, String> {
        let first_bad = |index: Option<usize>,
                         token: Option<usize>,
                         row: Option<usize>,
                         expected: Option<String>,
                         got: Option<String>|
         -> Result<Option<FirstBad>, String> {
            match (index, token, row, expected, got) {
                (None, None, None, None, None) => Ok(None),
                (Some(index), Some(token), Some(row), Some(e), Some(g)) => Ok(Some(FirstBad {
                    index,
                    token,
                    row,
                    expected_bits: parse_bits(&e)?,
                    got_bits: parse_bits(&g)?,
                })),
                _ => Err("a first difference is given only in part".to_string()),
            }
        };
        Ok(ParityRow {
            variant: j.variant,
            canonical: j.canonical,
            mode: j.mode,
            layout: j.layout.parse()?,
            shape: Shape::new(j.m, j.n, j.k),
            seed: j.seed,
            mutant: j.mutant,
            gguf: match (j.gguf, j.tensor) {
                (Some(path), Some(tensor)) => Some(GgufTensorRef {
                    path: PathBuf::from(path),
                    tensor,
                }),
                (None, None) => None,
                _ => {
                    return Err(
                        "the row has one of 'gguf' and 'tensor' but not the other".to_string()
                    )
                }
            },
            status: j.status.parse()?,
            kernel_fault: j.kernel_fault,
            full: j.full,
            checked: j.checked,
            mismatches: j.mismatches,
            unwritten: j.unwritten,
            first_bad: first_bad(
                j.first_bad_index,
                j.first_bad_token,
                j.first_bad_row,
                j.first_bad_expected,
                j.first_bad_got,
            )?,
            proven_by: j.proven_by,
            proven_checked: j.proven_checked,
            proven_mismatches: j.proven_mismatches,
            proven_first_bad: first_bad(
                j.proven_first_bad_index,
                j.proven_first_bad_token,
                j.proven_first_bad_row,
                j.proven_first_bad_expected,
                j.proven_first_bad_got,
            )?,
            quant_checked: j.quant_checked,
            quant_mismatches: j.quant_mismatches,
            quant_first_bad: j.quant_first_bad,
            digest: j.digest,
            wall_ms: j.wall_ms,
            kernels_ms: j.kernels_ms,
            error: j.error,
        })
    }
}

enum Value {
    Str(String),
    Num(String),
    Bool(bool),
    Null,
}

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::workspace::POISON_BITS;

    fn tensor_of(path: PathBuf, tensor: &str) -> GgufTensorRef {
        GgufTensorRef {
            path,
            tensor: tensor.to_string(),
        }
    }

    #[test]
    fn rows_round_trip_through_the_child_line_and_json() {
        let desc = VariantDescription {
            name: "r56".into(),
            ..VariantDescription::DEFAULTS
        };
        let case = ParityCase {
            shape: Shape::new(4097, 513, 4096),
            layout: Layout::Raw,
            seed: 3,
            mutant: None,
        };
        let mut row = ParityRow::new(&desc, &case);
        assert_eq!(ParityRow::decode(&row.encode()), Ok(row.clone()));
        assert!(row.to_json().contains("\"proven_first_bad_index\":null"));
        row.status = Status::Mismatch;
        row.checked = 12_290;
        row.mismatches = 2;
        row.first_bad = Some(FirstBad {
            index: 4098,
            token: 1,
            row: 1,
            expected_bits: 0x3f80_0000,
            got_bits: POISON_BITS,
        });
        row.proven_by = Some("r41 (padded)".into());
        row.proven_checked = 4097 * 513;
        row.proven_mismatches = 1;
        row.proven_first_bad = Some(FirstBad {
            index: 7,
            token: 0,
            row: 7,
            expected_bits: 0x0000_0001,
            got_bits: 0x8000_0000,
        });
        row.quant_first_bad = Some("q[token 0][1]: want 3, got 4".into());
        row.digest = Some("0123456789abcdef".into());
        row.error = Some("tab\there, newline\nthere, back\\slash, \"quoted\"".into());
        row.wall_ms = 1234.5;
        row.mutant = Some("off_by_one_token_edge".into());
        row.kernel_fault = true;
        let line = row.encode();
        assert!(!line.contains('\n'));
        assert_eq!(ParityRow::decode(&line), Ok(row.clone()));
        let json = row.to_json();
        assert!(json.starts_with("{\"variant\":\"r56\","));
        assert!(json.contains("\"first_bad_got\":\"0xffc0dead\""));
        assert!(json
            .contains("\"error\":\"tab\\there, newline\\nthere, back\\\\slash, \\\"quoted\\\"\""));
        assert!(json.contains("\"proven_first_bad_index\":7"));
        assert!(json.contains("\"proven_first_bad_got\":\"0x80000000\""));
        assert!(json.contains("\"full\":false"));
        assert!(json.contains("\"mutant\":\"off_by_one_token_edge\""));
        assert!(json.contains("\"kernel_fault\":true"));
        // The object reads back as the row (times are kept to the microsecond).
        assert_eq!(ParityRow::from_json(&json), Ok(row.clone()));
        assert!(ParityRow::from_json("{}").is_err());
        assert_eq!(
            ParityRow::decode("mmqgen-parity-row\tvariant=x").unwrap_err(),
            "the result line has no field 'canonical'"
        );
        assert!(ParityRow::decode("garbage").is_err());
    }

    #[test]
    fn statuses_follow_the_counts() {
        let desc = VariantDescription::DEFAULTS;
        let case = ParityCase {
            shape: Shape::new(64, 1, 256),
            layout: Layout::Padded,
            seed: 1,
            mutant: None,
        };
        let mut row = ParityRow::new(&desc, &case);
        assert_eq!(row.status_from_counts(), Status::Pass);
        row.unwritten = 1;
        assert_eq!(row.status_from_counts(), Status::Mismatch);
        row.unwritten = 0;
        row.quant_mismatches = 1;
        assert_eq!(row.status_from_counts(), Status::Mismatch);
        assert!(Status::Failed.is_bad() && Status::Mismatch.is_bad());
        assert!(!Status::Pass.is_bad() && !Status::Skipped.is_bad());
    }

    #[test]
    fn gguf_rows_round_trip() {
        let desc = VariantDescription::DEFAULTS;
        let case = ParityCase::new(Shape::new(4, 77, 512), Layout::Raw, 1);
        let mut row = ParityRow::new(&desc, &case);
        row.gguf = Some(tensor_of("models/a b.gguf".into(), "blk.0.ffn_down.weight"));
        row.status = Status::Pass;
        assert_eq!(ParityRow::decode(&row.encode()), Ok(row.clone()));
        let json = row.to_json();
        assert!(
            json.contains("\"gguf\":\"models/a b.gguf\",\"tensor\":\"blk.0.ffn_down.weight\""),
            "{json}"
        );
        row.gguf = None;
        let json = row.to_json();
        assert!(json.contains("\"gguf\":null,\"tensor\":null"), "{json}");
        assert_eq!(ParityRow::from_json(&json), Ok(row.clone()));
        assert_eq!(ParityRow::decode(&row.encode()), Ok(row.clone()));
        let mut line = row.encode();
        line.push_str("\ttensor=x");
        assert_eq!(
            ParityRow::decode(&line).unwrap_err(),
            "the result line has one of the fields 'gguf' and 'tensor' but not the other"
        );
    }
}
