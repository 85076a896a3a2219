//! The hostile-input corpus: what a new user (or an attacker) can hand the `mmqgen` binary, in the five kinds of
//! input it reads (variant TOML, selection configs, GGUF files, q6_K inputs, command lines). Every case runs the
//! binary as a user would, under a time bound (killed after [`TIME_BOUND`]) and a memory bound (`ulimit -v`),
//! and asserts its exit status, that a refusal is exactly one line `mmqgen: ...` on stderr (no panic, no
//! backtrace, no unbounded echo of the input), and for some cases what the sentence says.
//!
//! Large inputs are generated here, in a temporary folder, at test time: fifos, `/dev/zero`, folders, files
//! over each cap (sparse, so they cost no disk), 100,000-rule configs, 1 MB and 50 MB names.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A case that takes longer is killed and fails.
const TIME_BOUND: Duration = Duration::from_secs(20);
/// Virtual memory the binary may map, in KiB (`ulimit -v`): 3 GiB.
const MEMORY_BOUND_KIB: u64 = 3 << 20;
/// The longest refusal accepted: a sentence, never an echo of a large input.
const MAX_SENTENCE: usize = 4000;

#[derive(Clone, Debug)]
enum Expect {
    /// Exit status 0.
    Accepted,
    /// A non-zero exit status and one line on stderr containing each of these.
    Refused(Vec<&'static str>),
}

#[derive(Clone, Debug)]
struct Case {
    name: String,
    args: Vec<OsString>,
    expect: Expect,
    /// Text stdout must not contain (raw escape codes, for instance).
    stdout_lacks: Option<&'static str>,
}

fn case(name: impl Into<String>, args: &[&dyn AsArg], expect: Expect) -> Case {
    Case {
        name: name.into(),
        args: args.iter().map(|a| a.as_arg()).collect(),
        expect,
        stdout_lacks: None,
    }
}

trait AsArg {
    fn as_arg(&self) -> OsString;
}
impl AsArg for &str {
    fn as_arg(&self) -> OsString {
        (*self).into()
    }
}
impl AsArg for String {
    fn as_arg(&self) -> OsString {
        self.into()
    }
}
impl AsArg for PathBuf {
    fn as_arg(&self) -> OsString {
        self.clone().into_os_string()
    }
}

fn refused(parts: &[&'static str]) -> Expect {
    Expect::Refused(parts.to_vec())
}

/// The scratch folder of this run.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        Scratch::named("corpus")
    }
    /// A folder of its own for one test (tests run at once in one process).
    fn named(test: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("mmqgen-hostile-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn file(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        fs::write(&path, bytes).unwrap();
        path
    }
    /// A sparse file of `len` bytes starting with `head`.
    fn sparse(&self, name: &str, head: &[u8], len: u64) -> PathBuf {
        let path = self.0.join(name);
        let mut f = fs::File::create(&path).unwrap();
        f.write_all(head).unwrap();
        f.set_len(len).unwrap();
        path
    }
    fn fifo(&self, name: &str) -> PathBuf {
        let path = self.0.join(name);
        let status = Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(status.success(), "mkfifo failed");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The ways a file input can be something other than a small regular file, each refused with a sentence.
fn not_regular_files(s: &Scratch, tag: &str, cap: u64) -> Vec<(String, PathBuf, &'static str)> {
    vec![
        (
            format!("{tag}: a fifo"),
            s.fifo(&format!("{tag}.fifo")),
            "fifo",
        ),
        (
            format!("{tag}: /dev/zero"),
            PathBuf::from("/dev/zero"),
            "character device",
        ),
        (format!("{tag}: a folder"), s.0.clone(), "folder"),
        (
            format!("{tag}: a missing file"),
            s.0.join("no-such-file"),
            "cannot read",
        ),
        (
            format!("{tag}: a file over the cap"),
            s.sparse(&format!("{tag}.huge"), b"", cap + 1),
            "over mmqgen's limit",
        ),
    ]
}

const VALID_VARIANT: &str = r#"
[[variant]]
name = "mine"
engine = "mma_k16"
mode = "f32_per16"
kdr = 2
nbj = 64
tile_n = 64
warps_m = 2
warps_n = 2
archs = ["sm_80", "sm_90"]
"#;

fn variant_cases(s: &Scratch) -> Vec<Case> {
    let mut cases = Vec::new();
    let list = |name: String, path: PathBuf, expect: Expect| {
        case(name, &[&"--variants", &path, &"list"], expect)
    };
    cases.push(list(
        "variants: a valid file".into(),
        s.file("valid.toml", VALID_VARIANT),
        Expect::Accepted,
    ));
    let second = s.file(
        "second.toml",
        VALID_VARIANT
            .replace("\"mine\"", "\"mine2\"")
            .replace("kdr = 2", "kdr = 4"),
    );
    cases.push(case(
        "variants: two files are both read",
        &[
            &"--variants",
            &s.0.join("valid.toml"),
            &"--variants",
            &second,
            &"emit",
            &"mine2",
        ],
        Expect::Accepted,
    ));
    cases.push(case(
        "variants: the same file twice",
        &[
            &"--variants",
            &s.0.join("valid.toml"),
            &"--variants",
            &s.0.join("valid.toml"),
            &"list",
        ],
        refused(&["given twice"]),
    ));
    // TOML syntax errors carry their line.
    let syntax = [
        "[[variant]\nname = \"x\"",
        "[[variant]]\nname = \"x",
        "[[variant]]\nname = \"x\"\nname = \"y\"",
        "[[variant]]\nkdr = = 2",
        "[[variant]]\nkdr = 99999999999999999999999",
        "[[variant]]\nname = 'a'\n\u{1b}[31m = 1",
        "\0\0\0",
        "[[variant]]\narchs = [\"sm_90\"",
        "[[variant]]\n  nbj = 0x",
        "variant = 3\n[[variant]]",
    ];
    for (i, text) in syntax.iter().enumerate() {
        cases.push(list(
            format!("variants: TOML syntax error {i}"),
            s.file(&format!("syntax{i}.toml"), text),
            refused(&["line"]),
        ));
    }
    let with = |field: &str, value: &str| {
        VALID_VARIANT
            .lines()
            .filter(|l| !l.starts_with(&format!("{field} =")))
            .collect::<Vec<_>>()
            .join("\n")
            + &format!("\n{field} = {value}\n")
    };
    let ints = [
        "kdr",
        "nbj",
        "tile_n",
        "warps_m",
        "warps_n",
        "ksplit",
        "stages",
        "accumulator_sets",
    ];
    for field in ints {
        for (tag, value, says) in [
            ("negative", "-1", "out of range"),
            ("past u32", "99999999999", "out of range"),
            ("a string", "\"two\"", field),
            ("a float", "2.5", field),
            ("a boolean", "true", field),
            ("zero", "0", field),
        ] {
            cases.push(list(
                format!("variants: {field} {tag}"),
                s.file(&format!("{field}-{tag}.toml"), with(field, value)),
                Expect::Refused(vec![says]),
            ));
        }
    }
    let words = [
        "engine",
        "mode",
        "scale_fetch",
        "expand",
        "totals",
        "refill",
        "archs",
        "cp_async_activations",
        "cp_async_plane",
    ];
    let long_word = format!("\"{}\"", "w".repeat(100_000));
    for field in words {
        for (tag, value) in [
            ("unknown word", "\"bogus\""),
            ("integer", "7"),
            ("escape codes", "\"\\u001b[31mred\\n\""),
            ("100 kB word", long_word.as_str()),
        ] {
            cases.push(list(
                format!("variants: {field} {tag}"),
                s.file(&format!("{field}-{tag}.toml"), with(field, value)),
                Expect::Refused(vec![field]),
            ));
        }
    }
    let name = |n: &str| VALID_VARIANT.replace("\"mine\"", n);
    for (tag, value, says) in [
        ("empty", "\"\"".to_string(), "non-empty"),
        ("upper case", "\"Mine\"".to_string(), "a-z"),
        ("newline", "\"a\\nb\"".to_string(), "a-z"),
        (
            "129 bytes",
            format!("\"{}\"", "a".repeat(129)),
            "at most 128",
        ),
        (
            "1 MB",
            format!("\"{}\"", "a".repeat(1 << 20)),
            "at most 128",
        ),
        ("an integer", "5".to_string(), "name"),
        ("a catalogue name", "\"r56\"".to_string(), "already"),
        (
            "a catalogue canonical name",
            format!(
                "\"{}\"",
                mmqgen::codegen::canonical_name(&mmqgen::catalogue::R56)
            ),
            "already",
        ),
    ] {
        cases.push(list(
            format!("variants: name {tag}"),
            s.file(&format!("name-{tag}.toml"), name(&value)),
            Expect::Refused(vec![says]),
        ));
    }
    // The 50 MB name is over the variant file's cap before it is parsed.
    cases.push(list(
        "variants: a 50 MB name".into(),
        s.file(
            "name-50mb.toml",
            name(&format!("\"{}\"", "a".repeat(50 << 20))),
        ),
        refused(&["over mmqgen's limit"]),
    ));
    // Same kernel as a catalogue variant under a new name: its canonical name would answer to two variants.
    let r56 = mmqgen::catalogue::R56;
    let same = format!(
        "[[variant]]\nname = \"r56_again\"\nengine = \"{}\"\nmode = \"{}\"\nkdr = {}\nnbj = {}\ntile_n = {}\n\
         warps_m = {}\nwarps_n = {}\nscale_fetch = \"{}\"\nexpand = \"{}\"\ncp_async_activations = {}\n\
         cp_async_plane = {}\nstages = {}\narchs = [\"sm_80\", \"sm_90\"]\n",
        r56.engine,
        r56.mode,
        r56.kdr,
        r56.nbj,
        r56.tile_n,
        r56.warps_m,
        r56.warps_n,
        r56.scale_fetch,
        r56.expand,
        r56.cp_async_activations,
        r56.cp_async_plane,
        r56.stages
    );
    cases.push(list(
        "variants: a catalogue kernel under a new name".into(),
        s.file("same-kernel.toml", same),
        Expect::Refused(vec!["canonical name"]),
    ));
    for (tag, text, says) in [
        (
            "a [[rule]] table",
            "[[rule]]\narch = \"sm_90\"\n",
            "[[variant]]",
        ),
        ("a [foo] table", "[foo]\nx = 1\n", "[[variant]]"),
        ("a top-level key", "answer = 42\n", "[[variant]]"),
        (
            "variant as a table",
            "[variant]\nname = \"x\"\n",
            "array of tables",
        ),
        (
            "an unknown field",
            "[[variant]]\nname = \"x\"\ncolour = 1\n",
            "unknown field",
        ),
        (
            "a field twice",
            "[[variant]]\nname = \"x\"\nkdr = 2\nKDR = 2\n",
            "unknown field",
        ),
        ("no name", "[[variant]]\nkdr = 2\n", "needs a name"),
        ("not UTF-8", "[[variant]]\nname = \"\u{ff}\"\n", "name"),
    ] {
        cases.push(list(
            format!("variants: {tag}"),
            s.file(&format!("table-{}.toml", tag.replace(' ', "_")), text),
            Expect::Refused(vec![says]),
        ));
    }
    cases.push(list(
        "variants: invalid UTF-8 bytes".into(),
        s.file("bad-utf8.toml", [0x5b, 0xff, 0xfe, 0x5d]),
        refused(&["UTF-8"]),
    ));
    for (name, path, says) in not_regular_files(s, "variants", 4 << 20) {
        cases.push(list(name, path, Expect::Refused(vec![says])));
    }
    cases
}

fn rule(arch: &str, tokens: &str, extra: &str, variant: &str) -> String {
    format!("[[rule]]\narch = \"{arch}\"\ntokens = {tokens}\n{extra}variant = \"{variant}\"\n")
}

fn both_archs() -> String {
    rule("sm_90", "{ min = 1 }", "", "r56")
        + &rule("sm_80", "{ min = 1 }", "", "r56")
        + &other_archs()
}

/// One rule for every architecture but sm_80 and sm_90 (`config check` finds a gap on any it has no rule for).
fn other_archs() -> String {
    mmqgen::Arch::ALL
        .into_iter()
        .filter(|a| !matches!(a, mmqgen::Arch::Sm80 | mmqgen::Arch::Sm90))
        .map(|a| rule(a.keyword(), "{ min = 1 }", "", "dp4a_int_per32"))
        .collect()
}

fn config_cases(s: &Scratch) -> Vec<Case> {
    let mut cases = Vec::new();
    let check = |name: String, path: PathBuf, expect: Expect| {
        case(name, &[&"config", &"check", &path], expect)
    };
    cases.push(check(
        "config: covering both architectures".into(),
        s.file("ok.toml", both_archs()),
        Expect::Accepted,
    ));
    cases.push(case(
        "config: the embedded default",
        &[&"config", &"check"],
        Expect::Accepted,
    ));
    cases.push(check(
        "config: only sm_80 rules is a config for sm_80 (the other architectures are notes)".into(),
        s.file("sm80.toml", rule("sm_80", "{ min = 1 }", "", "r56")),
        Expect::Accepted,
    ));
    cases.push(check(
        "config: k = 100 can never match".into(),
        s.file(
            "k100.toml",
            rule("sm_90", "[1, 8]", "k = 100\n", "r56") + &both_archs(),
        ),
        refused(&["problem"]),
    ));
    cases.push(check(
        "config: tokens past the largest n".into(),
        s.file(
            "n-huge.toml",
            both_archs() + &rule("sm_90", "{ min = 3000000000 }", "", "r56"),
        ),
        refused(&["problem"]),
    ));
    for (tag, text, says) in [
        ("syntax", "[[rule]\n".to_string(), "line"),
        (
            "huge integer",
            "[[rule]]\ntokens = 99999999999999999999999\n".to_string(),
            "line",
        ),
        (
            "unknown top key",
            "x = 1\n".to_string(),
            "unknown top-level key",
        ),
        (
            "rule not a table array",
            "rule = 5\n".to_string(),
            "array of tables",
        ),
        (
            "unknown rule key",
            rule("sm_90", "1", "colour = 1\n", "r56"),
            "unknown key",
        ),
        (
            "missing arch",
            "[[rule]]\ntokens = 1\nvariant = \"fold_per32\"\n".to_string(),
            "arch",
        ),
        ("unknown arch", rule("sm_70", "1", "", "r56"), "sm_70"),
        (
            "escape arch",
            rule("\\u001b[2J", "1", "", "r56"),
            "not one mmqgen targets",
        ),
        ("tokens zero", rule("sm_90", "0", "", "r56"), "at least 1"),
        (
            "tokens negative",
            rule("sm_90", "-5", "", "r56"),
            "at least 1",
        ),
        (
            "tokens reversed",
            rule("sm_90", "[9, 3]", "", "r56"),
            "empty",
        ),
        (
            "tokens three items",
            rule("sm_90", "[1, 2, 3]", "", "r56"),
            "3 items",
        ),
        (
            "tokens a string",
            rule("sm_90", "\"all\"", "", "r56"),
            "tokens",
        ),
        (
            "tokens empty table",
            rule("sm_90", "{}", "", "r56"),
            "empty table",
        ),
        (
            "tokens odd key",
            rule("sm_90", "{ low = 1 }", "", "r56"),
            "unknown key",
        ),
        (
            "unknown variant",
            rule("sm_90", "1", "", "nope"),
            "no variant named",
        ),
        (
            "long variant",
            rule("sm_90", "1", "", &"v".repeat(200_000)),
            "no variant named",
        ),
        (
            "variant for the wrong arch",
            rule("sm_80", "1", "", "wgmma_64x128"),
            "not built for",
        ),
        (
            "duplicate rule name",
            format!(
                "[[rule]]\nname = \"a\"\n{}[[rule]]\nname = \"a\"\n{}",
                &rule("sm_90", "1", "", "r56")[9..],
                &rule("sm_90", "2", "", "r56")[9..]
            ),
            "already used",
        ),
        (
            "declared variant clashes",
            format!("{VALID_VARIANT}{}", VALID_VARIANT),
            "already",
        ),
        (
            "declared variant named r56",
            VALID_VARIANT.replace("\"mine\"", "\"r56\""),
            "already",
        ),
    ] {
        cases.push(check(
            format!("config: {tag}"),
            s.file(&format!("cfg-{}.toml", tag.replace(' ', "_")), text),
            Expect::Refused(vec![says]),
        ));
    }
    // 100,000 rules: disjoint token counts on both architectures, no gap.
    let mut big = String::new();
    for arch in ["sm_90", "sm_80"] {
        for n in 1..50_000 {
            big += &rule(arch, &n.to_string(), "", "r56");
        }
        big += &rule(arch, "{ min = 50000 }", "", "r56");
    }
    big += &other_archs();
    cases.push(check(
        "config: 100,000 disjoint rules".into(),
        s.file("big-disjoint.toml", &big),
        Expect::Accepted,
    ));
    // 100,000 identical rules: every one after the first per architecture is dead.
    let mut same = String::new();
    for i in 0..100_000 {
        let arch = if i % 2 == 0 { "sm_90" } else { "sm_80" };
        same += &rule(arch, "{ min = 1 }", "", "r56");
    }
    cases.push(check(
        "config: 100,000 identical rules".into(),
        s.file("big-same.toml", &same),
        refused(&["problem"]),
    ));
    // 100,000 nested rules: each reaches one token further, so each lives and overlaps all before it.
    let mut nested_big = String::new();
    for n in 1..100_000 {
        nested_big += &rule("sm_90", &format!("[1, {n}]"), "", "r56");
    }
    nested_big += &both_archs();
    cases.push(check(
        "config: 100,000 nested rules".into(),
        s.file("big-nested.toml", &nested_big),
        Expect::Accepted,
    ));
    // 20,000 rules limited in m, each over one m: the exact test stays within its bounds.
    let mut limited = both_archs();
    for m in 1..20_000 {
        limited += &rule("sm_90", "[1, 64]", &format!("m = {m}\n"), "r56");
    }
    cases.push(check(
        "config: 20,000 m-limited rules under a full one".into(),
        s.file("big-limited.toml", &limited),
        refused(&["problem"]),
    ));
    for (name, path, says) in not_regular_files(s, "config", 32 << 20) {
        cases.push(check(name, path, Expect::Refused(vec![says])));
    }
    let fifo = s.fifo("explain-config.fifo");
    cases.push(case(
        "explain: --config a fifo",
        &[
            &"explain",
            &"--arch",
            &"sm_90",
            &"--m",
            &"4096",
            &"--n",
            &"8",
            &"--k",
            &"4096",
            &"--config",
            &fifo,
        ],
        refused(&["fifo"]),
    ));
    cases.push(case(
        "run: --config /dev/zero",
        &[&"run", &"--config", &"/dev/zero"],
        refused(&["character device"]),
    ));
    cases
}

/// GGUF bytes: `tensors` of (name, dims, type, offset), metadata of (key, type, raw value bytes).
fn gguf(
    meta: &[(&[u8], u32, Vec<u8>)],
    tensors: &[(&[u8], &[u64], u32, u64)],
    data: usize,
) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend((tensors.len() as u64).to_le_bytes());
    b.extend((meta.len() as u64).to_le_bytes());
    for (key, ty, value) in meta {
        b.extend((key.len() as u64).to_le_bytes());
        b.extend(*key);
        b.extend(ty.to_le_bytes());
        b.extend(value);
    }
    for (name, dims, ty, offset) in tensors {
        b.extend((name.len() as u64).to_le_bytes());
        b.extend(*name);
        b.extend((dims.len() as u32).to_le_bytes());
        for d in *dims {
            b.extend(d.to_le_bytes());
        }
        b.extend(ty.to_le_bytes());
        b.extend(offset.to_le_bytes());
    }
    while !b.len().is_multiple_of(32) {
        b.push(0);
    }
    b.extend(vec![0u8; data]);
    b
}

fn gguf_cases(s: &Scratch) -> Vec<Case> {
    let mut cases = Vec::new();
    let ls =
        |name: String, path: PathBuf, expect: Expect| case(name, &[&"gguf", &"ls", &path], expect);
    let f32_tensor = |name: &'static [u8], offset: u64| (name, &[8u64][..], 0u32, offset);
    cases.push(ls(
        "gguf: a valid file".into(),
        s.file(
            "ok.gguf",
            gguf(&[], &[f32_tensor(b"w", 0), f32_tensor(b"v", 32)], 64),
        ),
        Expect::Accepted,
    ));
    let valid = gguf(
        &[(
            b"general.name",
            8,
            [5u64.to_le_bytes().to_vec(), b"hello".to_vec()].concat(),
        )],
        &[f32_tensor(b"w", 0)],
        32,
    );
    for cut in [
        0,
        3,
        4,
        7,
        8,
        16,
        23,
        24,
        30,
        40,
        50,
        60,
        70,
        valid.len() - 1,
    ] {
        cases.push(ls(
            format!("gguf: truncated at {cut}"),
            s.file(&format!("cut{cut}.gguf"), &valid[..cut]),
            Expect::Refused(vec![]),
        ));
    }
    let mut bad_magic = valid.clone();
    bad_magic[..4].copy_from_slice(b"\x1b[2J");
    cases.push(ls(
        "gguf: bad magic with escapes".into(),
        s.file("magic.gguf", bad_magic),
        refused(&["magic"]),
    ));
    for version in [0u32, 1, 4, 0x0300_0000, u32::MAX] {
        let mut v = valid.clone();
        v[4..8].copy_from_slice(&version.to_le_bytes());
        cases.push(ls(
            format!("gguf: version {version}"),
            s.file(&format!("v{version}.gguf"), v),
            refused(&["version"]),
        ));
    }
    for len in [63usize, 64, 65, 1000, 65536, 1 << 20] {
        let name = vec![b'n'; len];
        let file = gguf(&[], &[(&name, &[8], 0, 0)], 32);
        let expect = if len < 64 {
            Expect::Accepted
        } else {
            refused(&["shorter than 64 bytes"])
        };
        cases.push(ls(
            format!("gguf: a {len}-byte tensor name"),
            s.file(&format!("name{len}.gguf"), file),
            expect,
        ));
    }
    for (tag, name) in [
        ("escape codes", &b"\x1b[31mred\x1b[0m"[..]),
        ("a newline", &b"w\nforged line"[..]),
        ("a carriage return", &b"w\rx"[..]),
        ("a bell", &b"w\x07"[..]),
    ] {
        let mut c = ls(
            format!("gguf: a name with {tag} is printed escaped"),
            s.file(
                &format!("esc-{}.gguf", tag.replace(' ', "_")),
                gguf(&[], &[(name, &[8], 0, 0)], 32),
            ),
            Expect::Accepted,
        );
        c.stdout_lacks = Some(if name.contains(&b'\n') {
            "\nforged"
        } else if name.contains(&0x1b) {
            "\x1b"
        } else if name.contains(&b'\r') {
            "\r"
        } else {
            "\x07"
        });
        cases.push(c);
    }
    cases.push(ls(
        "gguf: two tensors at the same offset".into(),
        s.file(
            "same-offset.gguf",
            gguf(&[], &[f32_tensor(b"a", 0), f32_tensor(b"b", 0)], 64),
        ),
        refused(&["overlap"]),
    ));
    cases.push(ls(
        "gguf: overlapping tensors".into(),
        s.file(
            "overlap.gguf",
            gguf(&[], &[(b"a", &[64], 0, 0), f32_tensor(b"b", 32)], 256),
        ),
        refused(&["overlap"]),
    ));
    cases.push(ls(
        "gguf: a misaligned tensor".into(),
        s.file("misaligned.gguf", gguf(&[], &[f32_tensor(b"a", 4)], 64)),
        refused(&["aligned"]),
    ));
    cases.push(ls(
        "gguf: data past the end".into(),
        s.file("past-end.gguf", gguf(&[], &[f32_tensor(b"a", 1 << 40)], 64)),
        refused(&["past the end"]),
    ));
    cases.push(ls(
        "gguf: a q6_K tensor of a partial block".into(),
        s.file("partial.gguf", gguf(&[], &[(b"q", &[100, 2], 14, 0)], 512)),
        refused(&["multiple of 256"]),
    ));
    cases.push(ls(
        "gguf: a shape that overflows".into(),
        s.file(
            "overflow.gguf",
            gguf(&[], &[(b"q", &[1 << 40, 1 << 40], 0, 0)], 32),
        ),
        refused(&["64 bits"]),
    ));
    cases.push(ls(
        "gguf: five dimensions".into(),
        s.file(
            "dims.gguf",
            gguf(&[], &[(b"q", &[1, 1, 1, 1, 1], 0, 0)], 32),
        ),
        refused(&["at most 4"]),
    ));
    cases.push(ls(
        "gguf: a duplicate tensor".into(),
        s.file(
            "dup-tensor.gguf",
            gguf(&[], &[f32_tensor(b"a", 0), f32_tensor(b"a", 32)], 64),
        ),
        refused(&["twice"]),
    ));
    let u32v = |v: u32| v.to_le_bytes().to_vec();
    for (tag, meta, says) in [
        (
            "a bad value type",
            vec![(&b"k"[..], 13u32, vec![])],
            "value type",
        ),
        (
            "a duplicate key",
            vec![(&b"k"[..], 4, u32v(1)), (&b"k"[..], 4, u32v(2))],
            "twice",
        ),
        (
            "a bad alignment",
            vec![(&b"general.alignment"[..], 4, u32v(3))],
            "power of two",
        ),
        (
            "an alignment string",
            vec![(
                &b"general.alignment"[..],
                8,
                [1u64.to_le_bytes().to_vec(), b"x".to_vec()].concat(),
            )],
            "power of two",
        ),
        (
            "a key with escapes twice",
            vec![(&b"\x1b[2J"[..], 4, u32v(1)), (&b"\x1b[2J"[..], 4, u32v(1))],
            "twice",
        ),
        (
            "a huge string length",
            vec![(&b"k"[..], 8, u64::MAX.to_le_bytes().to_vec())],
            "truncated",
        ),
        (
            "a huge array",
            vec![(
                &b"k"[..],
                9,
                [u32v(4), u64::MAX.to_le_bytes().to_vec()].concat(),
            )],
            "truncated",
        ),
        (
            "arrays nested too deep",
            vec![(
                &b"k"[..],
                9,
                (0..9)
                    .flat_map(|_| [u32v(9), 1u64.to_le_bytes().to_vec()].concat())
                    .collect(),
            )],
            "deep",
        ),
        (
            "a non-UTF-8 key",
            vec![(&b"\xff\xfe"[..], 4, u32v(1))],
            "UTF-8",
        ),
    ] {
        cases.push(ls(
            format!("gguf: {tag}"),
            s.file(
                &format!("meta-{}.gguf", tag.replace(' ', "_")),
                gguf(&meta, &[], 0),
            ),
            Expect::Refused(vec![says]),
        ));
    }
    let mut counts = valid.clone();
    counts[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    cases.push(ls(
        "gguf: a huge tensor count".into(),
        s.file("count.gguf", counts),
        Expect::Refused(vec![]),
    ));
    let mut kvs = valid.clone();
    kvs[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    cases.push(ls(
        "gguf: a huge metadata count".into(),
        s.file("kvcount.gguf", kvs),
        Expect::Refused(vec![]),
    ));
    // A header larger than what gguf ls reads (256 MiB): a 300 MB string, sparse.
    let mut head = gguf(&[], &[], 0)[..24].to_vec();
    head[16..24].copy_from_slice(&1u64.to_le_bytes());
    head.extend(1u64.to_le_bytes());
    head.push(b'k');
    head.extend(8u32.to_le_bytes());
    head.extend((300u64 << 20).to_le_bytes());
    cases.push(ls(
        "gguf: metadata over the header cap".into(),
        s.sparse("big-header.gguf", &head, (300 << 20) + 64),
        refused(&["mmqgen reads of them"]),
    ));
    // A large model-sized file with a small header is listed without reading its data.
    let big = gguf(&[], &[(b"big", &[1 << 30], 0, 0)], 0);
    cases.push(ls(
        "gguf: a 4 GiB file with a small header".into(),
        s.sparse("big-data.gguf", &big, big.len() as u64 + (4 << 30)),
        Expect::Accepted,
    ));
    for (name, path, says) in not_regular_files(s, "gguf", 0).into_iter().take(4) {
        cases.push(ls(name, path, Expect::Refused(vec![says])));
    }
    cases
}

fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

fn q6k_cases(s: &Scratch) -> Vec<Case> {
    let mut cases = Vec::new();
    let out = s.0.join("q6k-out.bin");
    let quantize = |name: String, input: PathBuf, expect: Expect| {
        case(
            name,
            &[&"q6k", &"quantize", &"--input", &input, &"--output", &out],
            expect,
        )
    };
    let dequantize = |name: String, input: PathBuf, expect: Expect| {
        case(
            name,
            &[&"q6k", &"dequantize", &"--input", &input, &"--output", &out],
            expect,
        )
    };
    let fixtures =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../formats/tests/fixtures/q6k-ggml-ref");
    cases.push(quantize(
        "q6k quantize: ggml's inputs".into(),
        fixtures.join("input.f32"),
        Expect::Accepted,
    ));
    cases.push(dequantize(
        "q6k dequantize: ggml's blocks".into(),
        fixtures.join("ggml.q6k"),
        Expect::Accepted,
    ));
    cases.push(quantize(
        "q6k quantize: an empty file".into(),
        s.file("empty.f32", b""),
        Expect::Accepted,
    ));
    cases.push(dequantize(
        "q6k dequantize: an empty file".into(),
        s.file("empty.q6k", b""),
        Expect::Accepted,
    ));
    for len in [1usize, 3, 12, 1020, 1028, 4 * 257] {
        cases.push(quantize(
            format!("q6k quantize: {len} bytes"),
            s.file(&format!("len{len}.f32"), vec![0u8; len]),
            Expect::Refused(vec![]),
        ));
    }
    for len in [1usize, 209, 211, 420 + 7] {
        cases.push(dequantize(
            format!("q6k dequantize: {len} bytes"),
            s.file(&format!("len{len}.q6k"), vec![0u8; len]),
            refused(&["210"]),
        ));
    }
    for (tag, value, expect) in [
        ("NaN", f32::NAN, refused(&["finite"])),
        ("infinity", f32::INFINITY, refused(&["finite"])),
        ("minus infinity", f32::NEG_INFINITY, refused(&["finite"])),
        ("3e8", 3e8, refused(&["too large for q6_K"])),
        ("-3e8", -3e8, refused(&["too large for q6_K"])),
        ("f32::MAX", f32::MAX, refused(&["too large for q6_K"])),
        ("1e8", 1e8, Expect::Accepted),
        ("1e-30", 1e-30, Expect::Accepted),
        ("subnormal", 1e-40, Expect::Accepted),
    ] {
        let mut values = vec![0.5f32; 512];
        values[300] = value;
        cases.push(quantize(
            format!("q6k quantize: a weight of {tag}"),
            s.file(
                &format!("w-{}.f32", tag.replace(' ', "_")),
                f32_bytes(values),
            ),
            expect,
        ));
    }
    // Random bytes are valid blocks (any d, including inf and NaN, dequantizes).
    let noise: Vec<u8> = (0..210 * 4)
        .map(|i: u32| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    cases.push(dequantize(
        "q6k dequantize: noise".into(),
        s.file("noise.q6k", noise),
        Expect::Accepted,
    ));
    for (name, path, says) in not_regular_files(s, "q6k-quantize", 16 << 30) {
        cases.push(quantize(name, path, Expect::Refused(vec![says])));
    }
    for (name, path, says) in not_regular_files(s, "q6k-dequantize", 16 << 30) {
        cases.push(dequantize(name, path, Expect::Refused(vec![says])));
    }
    cases.push(case(
        "q6k quantize: output into a missing folder",
        &[
            &"q6k",
            &"quantize",
            &"--input",
            &fixtures.join("input.f32"),
            &"--output",
            &s.0.join("no/such/dir/out"),
        ],
        refused(&["cannot write"]),
    ));
    cases
}

fn command_line_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let explain = |m: &str, n: &str, k: &str| -> Vec<String> {
        ["explain", "--arch", "sm_90", "--m", m, "--n", n, "--k", k]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let push = |cases: &mut Vec<Case>, name: &str, words: Vec<String>, expect: Expect| {
        cases.push(Case {
            name: name.to_string(),
            args: words.into_iter().map(OsString::from).collect(),
            expect,
            stdout_lacks: None,
        });
    };
    push(
        &mut cases,
        "explain: a valid shape",
        explain("4096", "8", "4096"),
        Expect::Accepted,
    );
    for (tag, (m, n, k), says) in [
        ("m = 0", ("0", "8", "4096"), "not valid"),
        ("n = 0", ("4096", "0", "4096"), "not valid"),
        ("k = 0", ("4096", "8", "0"), "not valid"),
        ("k = 100", ("4096", "8", "100"), "multiple of 256"),
        ("k = 257", ("4096", "8", "257"), "multiple of 256"),
        (
            "m = 2^64-1",
            ("18446744073709551615", "8", "4096"),
            "not valid",
        ),
        ("m = 2^31", ("2147483648", "8", "4096"), "not valid"),
        (
            "n * m past 32 bits",
            ("2000000000", "8", "4096"),
            "not valid",
        ),
        ("m = 2^64", ("18446744073709551616", "8", "4096"), "--m"),
        ("m = -1", ("-1", "8", "4096"), "'-1'"),
        ("m = a word", ("many", "8", "4096"), "--m"),
        ("m = 1e3", ("1e3", "8", "4096"), "--m"),
        ("k = huge", ("1", "1", "999999999999999999999999999"), "--k"),
        ("m empty", ("", "8", "4096"), "--m"),
    ] {
        push(
            &mut cases,
            &format!("explain: {tag}"),
            explain(m, n, k),
            Expect::Refused(vec![says]),
        );
    }
    for (tag, arch) in [
        ("sm_70", "sm_70"),
        ("escapes", "\u{1b}[2J\n"),
        ("100 kB", &"x".repeat(100_000)),
    ] {
        let words = [
            "explain", "--arch", arch, "--m", "1", "--n", "1", "--k", "256",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        push(
            &mut cases,
            &format!("explain: arch {tag}"),
            words,
            refused(&["architecture"]),
        );
    }
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let long = "z".repeat(100_000);
    for (tag, w, expect) in [
        ("no subcommand", words(&[]), Expect::Refused(vec![])),
        (
            "unknown subcommand",
            words(&["frobnicate"]),
            Expect::Refused(vec![]),
        ),
        (
            "unknown flag",
            words(&["list", "--frobnicate"]),
            Expect::Refused(vec![]),
        ),
        (
            "100 kB unknown subcommand",
            vec![long.clone()],
            Expect::Refused(vec![]),
        ),
        (
            "escape-code subcommand",
            words(&["\u{1b}[2J\n"]),
            Expect::Refused(vec![]),
        ),
        ("--help", words(&["--help"]), Expect::Accepted),
        ("--version", words(&["--version"]), Expect::Accepted),
        ("list", words(&["list"]), Expect::Accepted),
        (
            "emit a known variant",
            words(&["emit", "r56"]),
            Expect::Accepted,
        ),
        (
            "emit an unknown variant",
            words(&["emit", "r99"]),
            refused(&["no variant named"]),
        ),
        (
            "emit a 100 kB name",
            vec!["emit".into(), long.clone()],
            refused(&["no variant named"]),
        ),
        (
            "emit an escape-code name",
            words(&["emit", "\u{1b}]0;owned\u{7}"]),
            refused(&["no variant named"]),
        ),
        (
            "emit without a name",
            words(&["emit"]),
            Expect::Refused(vec![]),
        ),
        (
            "emit to a missing folder",
            words(&["emit", "r56", "--output", "/nonexistent/dir/x.cu"]),
            refused(&["cannot write"]),
        ),
        (
            "check an unknown arch",
            words(&["check", "--arch", "sm_70"]),
            Expect::Refused(vec![]),
        ),
        (
            "check an unknown variant",
            words(&["check", "--variant", "nope"]),
            refused(&["no variant named"]),
        ),
        (
            "parity without a GPU",
            words(&["parity"]),
            refused(&["GPU"]),
        ),
        (
            "parity --mutants without a GPU",
            words(&["parity", "--mutants"]),
            refused(&["GPU"]),
        ),
        (
            "parity a bad shape",
            words(&["parity", "--shape", "0,1,256"]),
            refused(&["shape"]),
        ),
        (
            "parity a 100 kB shape",
            vec!["parity".into(), "--shape".into(), long.clone()],
            refused(&["shape"]),
        ),
        (
            "parity shape k = 100",
            words(&["parity", "--shape", "1,1,100"]),
            refused(&["256"]),
        ),
        (
            "parity shape two numbers",
            words(&["parity", "--shape", "1,1"]),
            refused(&["m,n,k"]),
        ),
        (
            "parity shape past u64",
            words(&["parity", "--shape", "1,1,99999999999999999999999"]),
            refused(&["out of range"]),
        ),
        (
            "parity --gguf a fifo-less missing file",
            words(&["parity", "--gguf", "/nonexistent.gguf", "--tensor", "w"]),
            Expect::Refused(vec![]),
        ),
        (
            "bench a bad shape",
            words(&["bench", "--shape", "1,0,256"]),
            refused(&["shape"]),
        ),
        (
            "bench --repeats 0",
            words(&["bench", "--repeats", "0"]),
            refused(&["at least 1"]),
        ),
        (
            "profile a bad shape",
            words(&["profile", "--variant", "r56", "--shape", "a,b,c"]),
            refused(&["shape"]),
        ),
        (
            "tune m = 0",
            words(&["tune", "--m", "0"]),
            Expect::Refused(vec![]),
        ),
        (
            "tune k = 100",
            words(&["tune", "--k", "100"]),
            Expect::Refused(vec![]),
        ),
        (
            "config check two files",
            words(&["config", "check", "a", "b"]),
            Expect::Refused(vec![]),
        ),
        (
            "gguf ls without a file",
            words(&["gguf", "ls"]),
            Expect::Refused(vec![]),
        ),
        (
            "q6k without --output",
            words(&["q6k", "quantize", "--input", "x"]),
            Expect::Refused(vec![]),
        ),
        (
            "--variants without a file",
            words(&["--variants"]),
            Expect::Refused(vec![]),
        ),
    ] {
        push(&mut cases, &format!("command line: {tag}"), w, expect);
    }
    cases
}

/// Runs one case; `Err` says what was wrong.
fn run(case: &Case, scratch: &Path, id: usize) -> Result<(), String> {
    let out_path = scratch.join(format!("stdout-{id}"));
    let err_path = scratch.join(format!("stderr-{id}"));
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {MEMORY_BOUND_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_mmqgen"))
        .args(&case.args)
        .env("RUST_BACKTRACE", "1")
        .env("MMQGEN_CACHE_DIR", scratch.join("cache"))
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(fs::File::create(&err_path).unwrap())
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > TIME_BOUND {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {TIME_BOUND:?}: killed"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stderr = String::from_utf8_lossy(&fs::read(&err_path).unwrap()).into_owned();
    let stdout = fs::read(&out_path).unwrap();
    let _ = fs::remove_file(&out_path);
    let _ = fs::remove_file(&err_path);
    if stderr.contains("panicked")
        || stderr.contains("RUST_BACKTRACE")
        || stderr.contains("stack backtrace")
    {
        return Err(format!("panicked: {stderr}"));
    }
    if let Some(lacks) = case.stdout_lacks {
        if String::from_utf8_lossy(&stdout).contains(lacks) {
            return Err(format!("stdout holds {lacks:?}"));
        }
    }
    match &case.expect {
        Expect::Accepted => {
            if !status.success() {
                return Err(format!("refused ({status}): {stderr}"));
            }
        }
        Expect::Refused(parts) => {
            if status.success() {
                return Err("accepted".to_string());
            }
            if status.code().is_none() {
                return Err(format!("killed by a signal ({status}): {stderr}"));
            }
            let lines: Vec<&str> = stderr.lines().collect();
            if lines.len() != 1 {
                return Err(format!(
                    "{} lines on stderr, not one: {}",
                    lines.len(),
                    stderr.chars().take(600).collect::<String>()
                ));
            }
            let line = lines[0];
            if !line.starts_with("mmqgen: ") {
                return Err(format!("not a sentence of mmqgen: {line}"));
            }
            if line.chars().count() > MAX_SENTENCE {
                return Err(format!(
                    "{} characters: {}...",
                    line.chars().count(),
                    &line[..200]
                ));
            }
            if line.contains('\u{1b}') || line.contains('\r') {
                return Err(format!("a raw control character: {line:?}"));
            }
            for part in parts {
                if !line.contains(part) {
                    return Err(format!("does not say {part:?}: {line}"));
                }
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
#[test]
fn every_hostile_input_gets_one_sentence_within_bounds() {
    let scratch = Scratch::new();
    let mut cases = Vec::new();
    cases.extend(variant_cases(&scratch));
    cases.extend(config_cases(&scratch));
    cases.extend(gguf_cases(&scratch));
    cases.extend(q6k_cases(&scratch));
    cases.extend(command_line_cases());
    cases.extend(round_three_cases(&scratch));
    assert!(cases.len() >= 200, "the corpus has {} cases", cases.len());

    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 4);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                if let Err(why) = run(case, &scratch.0, i) {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{}: {why}", case.name));
                }
            });
        }
    });
    let failures: Vec<String> = failures
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|f| {
            f.lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(500)
                .collect()
        })
        .collect();
    eprintln!(
        "{} hostile inputs in {:.1} s",
        cases.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

// Round three (issue 55): the surfaces added since the corpus above, class by class. What fits the corpus's
// shape (arguments in, one sentence or success out) is in `round_three_cases`; what needs more (a full disk, a
// closed NVRTC, files that must survive, a cache folder) has a test of its own below.

/// A `[[variant]]` table of the int12 copy-engine tile with its totals in the output.
fn int12_output_totals(name: &str, tile_n: u32, warps_n: u32, blocks_per_sm: u32) -> String {
    format!(
        "[[variant]]\nname = \"{name}\"\nengine = \"wgmma_k32_regfold\"\nmode = \"int12_per256\"\nkdr = 8\n\
         nbj = 128\ntile_n = {tile_n}\nwarps_m = 8\nwarps_n = {warps_n}\nscale_fetch = \"narrow\"\n\
         expand = \"uint4\"\nstages = 3\nrefill = \"tma\"\ntotals = \"output\"\nblocks_per_sm = {blocks_per_sm}\n\
         archs = [\"sm_90\"]\n"
    )
}

/// A sweep of the mma_k16 engine over `archs` (one set per point when given as a list of lists).
fn mma_sweep(name: &str, archs: &str) -> String {
    format!(
        "[[sweep]]\nname = \"{name}\"\nengine = \"mma_k16\"\nmode = \"f32_per16\"\nkdr = 2\nnbj = 64\ntile_n = 64\n\
         warps_m = 2\nwarps_n = 2\nscale_fetch = \"narrow\"\nexpand = \"uint4\"\narchs = {archs}\n"
    )
}

fn round_three_cases(s: &Scratch) -> Vec<Case> {
    let mut cases = Vec::new();
    let with = |file: &PathBuf, rest: &[&str]| -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--variants".into(), file.clone().into_os_string()];
        args.extend(rest.iter().map(OsString::from));
        args
    };
    let push = |cases: &mut Vec<Case>, name: &str, args: Vec<OsString>, expect: Expect| {
        cases.push(Case {
            name: name.to_string(),
            args,
            expect,
            stdout_lacks: None,
        })
    };

    // Class 1: the descriptions that crashed NVRTC inside nvrtcCompileProgram are refused when read.
    let crash = s.file("crash.toml", int12_output_totals("crash", 64, 2, 1));
    push(
        &mut cases,
        "class 1: the 128 x 64, 8 x 2 warp int12 tile with totals in the output",
        with(&crash, &["check", "--no-sass", "--variant", "crash"]),
        refused(&["field `totals`", "crashes NVRTC"]),
    );
    let crash_b2 = s.file(
        "crash-b2.toml",
        int12_output_totals("crash_b2", 32, 1, 2).replace("stages = 3", "stages = 2"),
    );
    push(
        &mut cases,
        "class 1: the 128 x 32 int12 tile with totals in the output at 2 blocks per SM",
        with(&crash_b2, &["list"]),
        refused(&["crashes NVRTC", "got 8 x 1 x 2"]),
    );

    // Class 4: sweeps.
    let twice = s.file(
        "two-names.toml",
        mma_sweep("tw", "[\"sm_90\"]") + &mma_sweep("tw", "[\"sm_80\"]"),
    );
    push(
        &mut cases,
        "class 4: two sweeps of one name in a file",
        with(&twice, &["list"]),
        refused(&["sweep #1 has the same name"]),
    );
    let first = s.file(
        "sweep-a.toml",
        mma_sweep("ab", "[[\"sm_80\"], [\"sm_90\"]]"),
    );
    let second = s.file("sweep-b.toml", mma_sweep("ab", "[\"sm_90\"]"));
    let mut args = with(&first, &[]);
    args.extend(with(&second, &["list"]));
    push(
        &mut cases,
        "class 4: two sweeps of one name in two files",
        args,
        refused(&["has the name of a sweep of"]),
    );
    // 1,000 sweeps of 10,000 points each: 136 KB that once expanded to 10 M points and 5.8 GB.
    let values = (1..=100)
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let mut many = String::new();
    for n in 0..1000 {
        many += &format!("[[sweep]]\nname = \"s{n}\"\nnbj = [{values}]\ntile_n = [{values}]\n");
    }
    let many = s.file("many-sweeps.toml", many);
    push(
        &mut cases,
        "class 4: 1,000 sweeps of 10,000 points",
        with(&many, &["list"]),
        refused(&["over all sweeps together"]),
    );
    // One file under two spellings, and through a link.
    let spelled = s.file("spelled.toml", mma_sweep("sp", "[\"sm_90\"]"));
    let link = s.0.join("spelled-link.toml");
    std::os::unix::fs::symlink(&spelled, &link).unwrap();
    for (tag, other) in [("./", s.0.join(".").join("spelled.toml")), ("a link", link)] {
        let mut args = with(&spelled, &[]);
        args.extend(with(&other, &["list"]));
        push(
            &mut cases,
            &format!("class 4: one --variants file twice, as {tag}"),
            args,
            refused(&["is given twice"]),
        );
    }
    // A sweep whose every point is refused: nothing to tune, not the catalogue.
    let none = s.file(
        "no-valid-point.toml",
        "[[sweep]]\nname = \"nv\"\nengine = \"mma_k16\"\nkdr = [3, 5]\n",
    );
    push(
        &mut cases,
        "class 4: tune over sweeps with no valid point",
        with(&none, &["tune", "--compile-only"]),
        refused(&["no valid point", "nothing to tune"]),
    );
    // A point that renders like a known variant for the same architectures is that variant: `emit` by the
    // point's name works. One declared for other architectures is refused, and `emit` says why.
    let like_r41 = s.file(
        "like-r41.toml",
        mma_sweep("lk", "[[\"sm_80\"], [\"sm_80\", \"sm_90\"]]"),
    );
    push(
        &mut cases,
        "class 4: emit a point declared for other architectures than the variant it renders like",
        with(&like_r41, &["emit", "lk_sm80"]),
        refused(&["lk_sm80", "renders like r41", "declared for [sm_80]"]),
    );
    let same_as_r41 = s.file(
        "same-as-r41.toml",
        mma_sweep("sa", "[\"sm_80\", \"sm_90\"]"),
    );
    push(
        &mut cases,
        "class 4: emit a point that a known variant stands for",
        with(&same_as_r41, &["emit", "sa"]),
        Expect::Accepted,
    );

    // Class 6: a config that declares a variant the --variants file declares too, identically (as the config
    // `tune` writes declares the sweep points it picked), is read beside that file.
    let declared = s.file("declared.toml", VALID_VARIANT);
    let beside = s.file(
        "tuned-beside.toml",
        format!(
            "{VALID_VARIANT}{}{}",
            rule("sm_90", "{ min = 1 }", "", "mine"),
            rule("sm_80", "{ min = 1 }", "", "mine") + &other_archs()
        ),
    );
    push(
        &mut cases,
        "class 6: a config declaring the variant file's own variant, beside it",
        with(&declared, &["config", "check", beside.to_str().unwrap()]),
        Expect::Accepted,
    );
    let changed = s.file(
        "tuned-changed.toml",
        format!(
            "{}{}",
            VALID_VARIANT.replace("kdr = 2", "kdr = 4"),
            rule("sm_90", "{ min = 1 }", "", "mine")
        ),
    );
    push(
        &mut cases,
        "class 6: a config declaring another variant under a taken name, beside it",
        with(&declared, &["config", "check", changed.to_str().unwrap()]),
        refused(&["already taken"]),
    );

    // Class 7: rules that split m or K between them and together cover every shape leave no gap.
    let split = s.file(
        "split.toml",
        rule("sm_90", "{ min = 1 }", "m = { max = 8191 }\n", "r56")
            + &rule("sm_90", "{ min = 1 }", "m = { min = 8192 }\n", "r41")
            + &rule("sm_80", "[1, 100]", "k = { max = 4096 }\n", "r56")
            + &rule("sm_80", "[1, 200]", "k = { min = 4097 }\n", "r56")
            + &rule("sm_80", "{ min = 101 }", "", "r41")
            + &other_archs(),
    );
    push(
        &mut cases,
        "class 7: config check on rules that split m and K between them",
        vec!["config".into(), "check".into(), split.into_os_string()],
        Expect::Accepted,
    );
    let holed = s.file(
        "split-hole.toml",
        rule("sm_90", "{ min = 1 }", "m = { max = 8191 }\n", "r56")
            + &rule("sm_90", "{ min = 1 }", "m = { min = 8193 }\n", "r41")
            + &rule("sm_80", "{ min = 1 }", "", "r41")
            + &other_archs(),
    );
    push(
        &mut cases,
        "class 7: config check on a split that misses m = 8192",
        vec!["config".into(), "check".into(), holed.into_os_string()],
        refused(&["1 problem"]),
    );
    // 3,000 rules, none for sm_90: the refusal is one sentence, not every rule (it was a 54 KB line).
    let mut sm80 = String::new();
    for n in 1..3000 {
        sm80 += &rule("sm_80", &n.to_string(), "", "r56");
    }
    let sm80 = s.file("sm80-only.toml", sm80);
    push(
        &mut cases,
        "class 7: explain with no matching rule among 3,000",
        [
            "explain", "--arch", "sm_90", "--m", "4096", "--n", "8", "--k", "4096", "--config",
        ]
        .iter()
        .map(OsString::from)
        .chain([sm80.into_os_string()])
        .collect(),
        refused(&["no rule of", "matches sm_90", "--all"]),
    );

    // Class 8: GGUF tensor names that would read as others, and dimensions ggml refuses.
    for (tag, name, hidden) in [
        (
            "a right-to-left override",
            "evil\u{202e}txt.exe",
            "\u{202e}",
        ),
        ("a zero-width space", "blk.0\u{200b}.weight", "\u{200b}"),
        ("a left-to-right isolate", "w\u{2066}x\u{2069}", "\u{2066}"),
    ] {
        let file = s.file(
            &format!("hidden-{}.gguf", hidden.escape_unicode()),
            gguf(&[], &[(name.as_bytes(), &[8], 0, 0)], 32),
        );
        cases.push(Case {
            name: format!("class 8: gguf ls of a tensor name with {tag}"),
            args: vec!["gguf".into(), "ls".into(), file.into_os_string()],
            expect: Expect::Accepted,
            stdout_lacks: Some(hidden),
        });
    }
    // (Of a 1-byte type, where 2^63 elements still fit a u64 of bytes, and of a type mmqgen does not size.)
    for (tag, dims, ggml_type) in [
        ("2^63 of I8", &[1u64 << 63][..], 24u32),
        ("2^64 - 1 of an unknown type", &[8, u64::MAX][..], 77),
    ] {
        let file = s.file(
            &format!("dim-{}.gguf", ggml_type),
            gguf(&[], &[(b"w", dims, ggml_type, 0)], 32),
        );
        cases.push(case(
            format!("class 8: gguf ls of a tensor dimension of {tag}"),
            &[&"gguf", &"ls", &file],
            refused(&["2^63 - 1"]),
        ));
    }
    cases
}

/// What one run of the binary left.
struct Ran {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs the binary with `args` under the corpus's memory bound and `time`, `setup` adjusting the command
/// (environment, working folder, stdout or stderr to /dev/full); stdout and stderr are kept unless `setup`
/// sends them elsewhere.
fn mmqgen_in(
    s: &Scratch,
    args: &[OsString],
    time: Duration,
    setup: impl FnOnce(&mut Command),
) -> Ran {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let id = RUNS.fetch_add(1, Ordering::Relaxed);
    let out_path = s.0.join(format!("ran-stdout-{id}"));
    let err_path = s.0.join(format!("ran-stderr-{id}"));
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!(
            "ulimit -v {MEMORY_BOUND_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_mmqgen"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env("MMQGEN_CACHE_DIR", s.0.join("cache"))
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(fs::File::create(&err_path).unwrap());
    setup(&mut command);
    let mut child = command.spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > time {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: still running after {time:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let read = |p: &Path| String::from_utf8_lossy(&fs::read(p).unwrap_or_default()).into_owned();
    let ran = Ran {
        status,
        stdout: read(&out_path),
        stderr: read(&err_path),
    };
    assert!(
        !ran.stderr.contains("panicked") && !ran.stderr.contains("stack backtrace"),
        "{args:?} panicked: {}",
        ran.stderr
    );
    assert!(
        ran.status.code().is_some(),
        "{args:?}: killed by a signal ({}): {}",
        ran.status,
        ran.stderr
    );
    ran
}

fn words(w: &[&str]) -> Vec<OsString> {
    w.iter().map(OsString::from).collect()
}

/// The one line of a refusal (exit status 1, one `mmqgen: ` line on stderr).
fn refusal(ran: &Ran) -> String {
    assert_eq!(ran.status.code(), Some(1), "{}{}", ran.stdout, ran.stderr);
    let lines: Vec<&str> = ran.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {}", ran.stderr);
    assert!(lines[0].starts_with("mmqgen: "), "{}", lines[0]);
    lines[0].to_string()
}

fn dev_full() -> fs::File {
    fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap()
}

/// Class 1: NVRTC 13.0 crashes inside nvrtcCompileProgram on this engine's int12 tile with its totals in the
/// output once its warps get 128 registers each; the validator refuses those descriptions (the corpus), and
/// whatever still crashes it is compiled in a child process: here the mmqgen binary itself, handed a source that
/// crashes NVRTC (a valid tile's, held to two blocks per SM), says "the compiler crashed (signal ...)" and this
/// process lives on; the valid source compiles through the same child.
#[cfg(unix)]
#[test]
fn class_1_a_compiler_crash_in_the_child_is_one_sentence() {
    use mmqgen::compile::isolated::{ChildCompiler, CHILD_ARG};
    use mmqgen::compile::CompileError;
    if !mmqgen::testing::nvrtc_or_skip("class_1_a_compiler_crash_in_the_child_is_one_sentence") {
        return;
    }
    let text = int12_output_totals("fits", 32, 1, 1).replace("stages = 3", "stages = 2");
    let desc = mmqgen::codegen::spec_file::variants_from_toml_str(&text).unwrap()[0].clone();
    let rendered = mmqgen::codegen::render::render(&desc).unwrap();
    let crashing = rendered.source.replace(
        "__launch_bounds__(THREADS)",
        "__launch_bounds__(THREADS, 2)",
    );
    assert_ne!(
        crashing, rendered.source,
        "the kernels' launch bounds moved"
    );
    let child = ChildCompiler {
        program: env!("CARGO_BIN_EXE_mmqgen").into(),
        args: vec![CHILD_ARG.into()],
        timeout: Duration::from_secs(300),
    };
    let arch = rendered.nvrtc_arch(mmqgen::Arch::Sm90);
    let e = child
        .compile(&crashing, "crash.cu", &arch, false)
        .unwrap_err();
    assert!(
        matches!(e, CompileError::Crashed { signal: 6 | 11, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with("the compiler crashed (signal "),
        "{e}"
    );
    let ok = child
        .compile(&rendered.source, "fits.cu", &arch, false)
        .unwrap();
    assert_eq!(&ok.cubin[..4], b"\x7fELF");
    assert!(!ok.report.is_empty(), "{}", ok.log);
}

/// Class 2: q6k quantize and dequantize never write over their input, however the output names it (the same
/// path, another spelling, a link, a hard link): one sentence, the input unchanged. Outputs are written whole
/// or not at all: a conversion that fails halfway leaves the file that was there.
#[cfg(unix)]
#[test]
fn class_2_q6k_never_writes_over_its_input() {
    let s = Scratch::named("class2");
    let weights: Vec<f32> = (0..512)
        .map(|i| ((i * 37) % 101) as f32 / 50.0 - 1.0)
        .collect();
    let f32_path = s.file("w.f32", f32_bytes(weights.iter().copied()));
    let ran = mmqgen_in(
        &s,
        &[
            "q6k".into(),
            "quantize".into(),
            "--input".into(),
            f32_path.clone().into(),
            "--output".into(),
            s.0.join("w.q6k").into(),
        ],
        TIME_BOUND,
        |_| {},
    );
    assert!(ran.status.success(), "{}", ran.stderr);
    let q6k_path = s.0.join("w.q6k");
    for (input, command) in [(&f32_path, "quantize"), (&q6k_path, "dequantize")] {
        let before = fs::read(input).unwrap();
        let name = input.file_name().unwrap().to_str().unwrap();
        let link = s.0.join(format!("{name}.link"));
        let hard = s.0.join(format!("{name}.hard"));
        std::os::unix::fs::symlink(input, &link).unwrap();
        fs::hard_link(input, &hard).unwrap();
        for output in [
            input.clone(),
            s.0.join(".").join(name),
            s.0.join("..").join(s.0.file_name().unwrap()).join(name),
            link,
            hard,
        ] {
            let ran = mmqgen_in(
                &s,
                &[
                    "q6k".into(),
                    command.into(),
                    "--input".into(),
                    input.clone().into(),
                    "--output".into(),
                    output.clone().into(),
                ],
                TIME_BOUND,
                |_| {},
            );
            let line = refusal(&ran);
            assert!(line.contains("is the input"), "{output:?}: {line}");
            assert_eq!(fs::read(input).unwrap(), before, "{command} {output:?}");
        }
    }
    // A NaN in the second block: the conversion stops there, and the output that was there stays whole.
    let mut bad = weights.clone();
    bad[300] = f32::NAN;
    let bad_path = s.file("bad.f32", f32_bytes(bad));
    let kept = s.file("kept.q6k", b"an earlier output");
    let ran = mmqgen_in(
        &s,
        &[
            "q6k".into(),
            "quantize".into(),
            "--input".into(),
            bad_path.into(),
            "--output".into(),
            kept.clone().into(),
        ],
        TIME_BOUND,
        |_| {},
    );
    assert!(refusal(&ran).contains("NaN"), "{}", ran.stderr);
    assert_eq!(fs::read(&kept).unwrap(), b"an earlier output");
    let left: Vec<String> = fs::read_dir(&s.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// Class 3: any error writing the output other than a closed pipe (here a full disk, /dev/full) is one sentence
/// on stderr and exit status 1, for every command that prints; a refusal printed to a full stderr still exits 1,
/// without a panic.
#[cfg(unix)]
#[test]
fn class_3_a_full_disk_is_one_sentence() {
    let s = Scratch::named("class3");
    let gguf_file = s.file("ok.gguf", gguf(&[], &[(b"w", &[8], 0, 0)], 32));
    let sweep = s.file("sweep.toml", mma_sweep("fd", "[\"sm_90\"]"));
    let mut commands = vec![
        words(&["list"]),
        words(&["emit", "r56"]),
        vec!["gguf".into(), "ls".into(), gguf_file.into_os_string()],
        words(&[
            "explain", "--arch", "sm_90", "--m", "4096", "--n", "512", "--k", "4096", "--all",
        ]),
        words(&["config", "check", "--verbose"]),
        vec!["--variants".into(), sweep.into_os_string(), "list".into()],
    ];
    if mmqgen::compile::nvrtc_available() {
        commands.push(words(&[
            "tune",
            "--compile-only",
            "--variant",
            "r41",
            "--jobs",
            "1",
        ]));
    }
    for args in commands {
        let ran = mmqgen_in(&s, &args, Duration::from_secs(120), |c| {
            c.stdout(dev_full()).current_dir(&s.0);
        });
        // (tune's progress lines on stderr come first; the sentence is the one `mmqgen:` line, and the last.)
        assert_eq!(ran.status.code(), Some(1), "{args:?}: {}", ran.stderr);
        let sentences: Vec<&str> = ran
            .stderr
            .lines()
            .filter(|l| l.starts_with("mmqgen"))
            .collect();
        assert_eq!(sentences.len(), 1, "{args:?}: {}", ran.stderr);
        assert_eq!(ran.stderr.lines().last(), Some(sentences[0]), "{args:?}");
        assert!(
            sentences[0]
                .starts_with("mmqgen: cannot write to standard output: No space left on device"),
            "{args:?}: {}",
            sentences[0]
        );
    }
    for args in [
        words(&["emit", "r99"]),
        words(&[
            "explain", "--arch", "sm_70", "--m", "1", "--n", "1", "--k", "256",
        ]),
    ] {
        let ran = mmqgen_in(&s, &args, TIME_BOUND, |c| {
            c.stderr(dev_full());
        });
        assert_eq!(ran.status.code(), Some(1), "{args:?}");
    }
}

/// The file `tune --cubin-cache DIR` keeps r41's sm_90 cubin in (the key of its rendered source).
fn r41_entry(dir: &Path) -> PathBuf {
    use mmqgen::compile::cache::CubinCache;
    let all = mmqgen::catalogue::all();
    let r41 = mmqgen::catalogue::find(&all, "r41").unwrap();
    let rendered = mmqgen::codegen::render::render(r41).unwrap();
    let cache = CubinCache::new(dir);
    let key = cache.key(
        &rendered.source,
        &format!("{}.cu", rendered.canonical),
        &rendered.nvrtc_arch(mmqgen::Arch::Sm90),
        false,
        mmqgen::compile::nvrtc_version().unwrap(),
    );
    cache.entry_path(&key)
}

/// Class 5: the cubin cache never reads what is not an entry (a fifo hung `tune`, a link to /dev/zero was read
/// into memory: both are rebuilt, within the time and memory bounds); a cache folder that cannot be used is one
/// warning and the work stands; `run` without any cache folder still compiles and runs the CPU reference.
#[cfg(unix)]
#[test]
fn class_5_the_cubin_cache_survives_its_folder() {
    let s = Scratch::named("class5");
    let one_rule = s.file(
        "one.toml",
        rule("sm_90", "{ min = 1 }", "", "r41") + &rule("sm_80", "{ min = 1 }", "", "r41"),
    );
    if mmqgen::compile::nvrtc_available() {
        let dir = s.0.join("cubins");
        fs::create_dir_all(&dir).unwrap();
        let entry = r41_entry(&dir);
        let fifo: fn(&Path) =
            |p| assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
        let zero: fn(&Path) = |p| std::os::unix::fs::symlink("/dev/zero", p).unwrap();
        for (tag, plant) in [("a fifo", fifo), ("a link to /dev/zero", zero)] {
            let _ = fs::remove_file(&entry);
            plant(&entry);
            let mut args = words(&[
                "tune",
                "--compile-only",
                "--variant",
                "r41",
                "--cubin-cache",
            ]);
            args.push(dir.clone().into());
            let ran = mmqgen_in(&s, &args, Duration::from_secs(60), |_| {});
            assert!(ran.status.success(), "{tag}: {}", ran.stderr);
            assert!(
                ran.stdout.contains("1 of 1 candidate(s) compiled cleanly"),
                "{tag}: {}",
                ran.stdout
            );
            assert!(
                fs::symlink_metadata(&entry).unwrap().is_file(),
                "{tag}: not rebuilt"
            );
        }
    }
    // The cache folder is a file: one warning, the run stands.
    let blocker = s.file("not-a-folder", b"");
    let run = |setup: &dyn Fn(&mut Command)| {
        mmqgen_in(
            &s,
            &["run".into(), "--config".into(), one_rule.clone().into()],
            Duration::from_secs(120),
            setup,
        )
    };
    let ran = run(&|c| {
        c.env("MMQGEN_CACHE_DIR", &blocker);
    });
    assert!(ran.status.success(), "{}{}", ran.stdout, ran.stderr);
    assert!(!ran.stdout.contains("FAILED"), "{}", ran.stdout);
    if mmqgen::compile::nvrtc_available() {
        let warnings: Vec<&str> = ran
            .stderr
            .lines()
            .filter(|l| l.contains("warning"))
            .collect();
        assert_eq!(warnings.len(), 1, "{}", ran.stderr);
        assert!(
            warnings[0].starts_with("mmqgen: warning: the cubin cache"),
            "{}",
            warnings[0]
        );
    }
    // No cache folder at all: the same, and the CPU reference runs.
    let ran = run(&|c| {
        c.env_remove("MMQGEN_CACHE_DIR")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("HOME");
    });
    assert!(ran.status.success(), "{}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.stdout.matches(" digest ").count(), 4, "{}", ran.stdout);
}

/// Class 6: `tune` refuses up front without NVRTC (it once dropped every candidate and exited 0); keeps a
/// variant that declares `allow_spills` (the default's own pick from 513 tokens was dropped); with
/// --compile-only, writes nothing to --output (a missing folder there is no reason to refuse) and no ranking
/// unless asked for one, and refuses an asked-for ranking in a missing folder.
#[cfg(unix)]
#[test]
fn class_6_tune_refuses_what_it_cannot_do_and_does_the_rest() {
    let s = Scratch::named("class6");
    let ld_cache = fs::read("/etc/ld.so.cache").unwrap_or_default();
    let system_nvrtc = ld_cache.windows(13).any(|w| w == b"libnvrtc.so.1");
    if !system_nvrtc {
        let ran = mmqgen_in(
            &s,
            &words(&["tune", "--compile-only", "--variant", "r41"]),
            TIME_BOUND,
            |c| {
                c.env_remove("LD_LIBRARY_PATH");
            },
        );
        let line = refusal(&ran);
        assert!(
            line.contains("NVRTC") && line.contains("cannot be used here"),
            "{line}"
        );
    }
    if !mmqgen::testing::nvrtc_or_skip("class_6_tune_refuses_what_it_cannot_do_and_does_the_rest") {
        return;
    }
    let ran = mmqgen_in(
        &s,
        &words(&[
            "tune",
            "--compile-only",
            "--variant",
            "wgmma_i12_128x96_tail_producer",
            "--output",
            "/nonexistent/folder/tuned.toml",
        ]),
        Duration::from_secs(120),
        |c| {
            c.current_dir(&s.0);
        },
    );
    assert!(ran.status.success(), "{}", ran.stderr);
    assert!(
        ran.stdout
            .contains("1 of 1 candidate(s) compiled cleanly for sm_90"),
        "{}{}",
        ran.stdout,
        ran.stderr
    );
    let written: Vec<String> = fs::read_dir(&s.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("ranking"))
        .collect();
    assert!(written.is_empty(), "an unasked-for ranking: {written:?}");
    let ran = mmqgen_in(
        &s,
        &words(&[
            "tune",
            "--compile-only",
            "--variant",
            "r41",
            "--ranking",
            "/nonexistent/folder/ranking",
        ]),
        TIME_BOUND,
        |_| {},
    );
    assert!(refusal(&ran).contains("does not exist"), "{}", ran.stderr);
}

/// Class 7 (and issue 53): `explain` leads with the winner and gives the other rules' verdicts on request;
/// `config check` leads with its verdict, and lists the informational findings and the rules on request.
#[cfg(unix)]
#[test]
fn class_7_long_outputs_lead_with_the_answer() {
    let s = Scratch::named("class7");
    let shape = [
        "explain", "--arch", "sm_90", "--m", "4096", "--n", "512", "--k", "4096",
    ];
    let ran = mmqgen_in(&s, &words(&shape), TIME_BOUND, |_| {});
    assert!(ran.status.success(), "{}", ran.stderr);
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert!(lines.len() <= 8, "{}", ran.stdout);
    assert!(lines[1].contains(": variant "), "{}", ran.stdout);
    assert!(!ran.stdout.contains(": no: "), "{}", ran.stdout);
    let mut all = words(&shape);
    all.push("--all".into());
    let ran = mmqgen_in(&s, &all, TIME_BOUND, |_| {});
    assert!(ran.stdout.contains(": no: "), "{}", ran.stdout);

    let ran = mmqgen_in(&s, &words(&["config", "check"]), TIME_BOUND, |_| {});
    assert!(ran.status.success(), "{}", ran.stderr);
    let first = ran.stdout.lines().next().unwrap_or_default();
    assert!(first.contains(": ok: no gaps"), "{}", ran.stdout);
    assert!(
        !ran.stdout.contains("overlap (informational)"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.lines().count() <= 3, "{}", ran.stdout);
    let ran = mmqgen_in(
        &s,
        &words(&["config", "check", "--verbose"]),
        TIME_BOUND,
        |_| {},
    );
    assert!(
        ran.stdout.contains("overlap (informational)"),
        "{}",
        ran.stdout
    );
    assert!(ran
        .stdout
        .lines()
        .next()
        .unwrap_or_default()
        .contains(": ok: no gaps"));
}
