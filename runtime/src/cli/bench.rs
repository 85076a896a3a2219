//! `mmqgen bench`: time variants against each other and against cuBLAS bf16/f16 on the same GPU (the timing
//! logic is [`crate::measure::bench`]). Progress goes to stderr; notes, the prefill and A/B verdicts, then the markdown
//! table (last, to paste into docs/PERF.md) go to stdout; `--json FILE` writes one JSON object per line.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::layout_arg::LayoutArg;
use super::{find_variant, CliError};
use crate::check::Shape;
use crate::codegen::VariantDescription;
use crate::gpu::device::Gpu;
use crate::measure::bench::{
    dedup_shapes, default_shapes, default_variants, prefill_shapes, run_bench, BenchConfig,
    BenchReport, CublasOut, FloorMode, DEFAULT_PARITY_SAMPLES, DEFAULT_REPEATS, DEFAULT_SEED,
    DEFAULT_WARMUP, PREFILL_TOKENS,
};
use crate::select::arch_from_str;
use serde_json::json;

/// Where the read floor is timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FloorArg {
    /// Beside every decode shape (n <= 32).
    Decode,
    /// Beside every shape.
    All,
    /// Nowhere.
    Off,
}

impl From<FloorArg> for FloorMode {
    fn from(a: FloorArg) -> FloorMode {
        match a {
            FloorArg::Decode => FloorMode::Decode,
            FloorArg::All => FloorMode::All,
            FloorArg::Off => FloorMode::Off,
        }
    }
}

/// The cuBLAS baselines' output type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CublasOutArg {
    /// bf16 out for the bf16 GEMM, f16 for the f16 one (what docs/DESIGN.md R4's directly called figures used).
    Input,
    /// f32 out, like the variants.
    F32,
}

fn parse_shape(s: &str) -> Result<Shape, String> {
    s.parse()
}

fn parse_repeats(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 timed calls give no median: use at least 1".to_string()),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a whole number")),
    }
}

fn parse_samples(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(v) if v >= DEFAULT_PARITY_SAMPLES => Ok(v),
        Ok(v) => Err(format!(
            "{v} sampled outputs are too few: the parity check before timing compares at least \
             {DEFAULT_PARITY_SAMPLES}"
        )),
        Err(_) => Err(format!("'{s}' is not a whole number")),
    }
}

/// `mmqgen bench [--shape m,n,k]... [--variant NAME]... [--all] [--ab A B] [--prefill] [--repeats N]
/// [--warmup N] [--json FILE] ...`, or `mmqgen bench --decode-step [--tokens 1,8,32] [--layout L] [--config F]`
#[derive(Args, Clone, Debug)]
#[command(group(clap::ArgGroup::new("takes_config").args(["picks", "decode_step"]).multiple(true)))]
pub struct BenchArgs {
    /// A shape m,n,k (weight rows, tokens, K) to time (repeat for several; default: n in 1, 8, 32, 128 at
    /// 4096,n,4096, then every m in 4096, 14336 by n in 512, 2048, 4096 by K in 4096, 14336).
    #[arg(long = "shape", value_name = "M,N,K", value_parser = parse_shape)]
    pub shapes: Vec<Shape>,

    // The field is `variant`, not `variants`: the `mmqgen` command has a global `--variants FILE`.
    /// A variant to time, by declared or canonical name (repeat for several; default: every variant except
    /// the dp4a engine's).
    #[arg(long = "variant", value_name = "NAME", conflicts_with_all = ["all", "ab"])]
    pub variant: Vec<String>,

    /// Time every known variant, the dp4a ones included.
    #[arg(long, conflicts_with = "ab")]
    pub all: bool,

    /// Also time, at each shape, the variant the selection config picks on this GPU for the layout, and end
    /// with a table of those picks (what a caller of the library gets).
    #[arg(long, conflicts_with = "ab")]
    pub picks: bool,

    /// The selection config for --picks and --decode-step (default: the embedded one).
    #[arg(long, value_name = "FILE", requires = "takes_config")]
    pub config: Option<PathBuf>,

    /// Time only A and B, interleaved on the same shapes, and apply the landing rule: B lands only if its
    /// median beats A's by at least 1.5% (per shape, and overall on the sum of medians).
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub ab: Option<Vec<String>>,

    /// Also time a Llama-3-8B layer's matmuls (q, k, v, o, gate, up, down) at 512 and 2048 tokens and report
    /// tokens per second, summing the best variant's median per matmul.
    #[arg(long)]
    pub prefill: bool,

    /// Timed calls per contestant per shape.
    #[arg(long, default_value_t = DEFAULT_REPEATS, value_parser = parse_repeats)]
    pub repeats: usize,

    /// Untimed calls per contestant per shape before the timed ones.
    #[arg(long, default_value_t = DEFAULT_WARMUP)]
    pub warmup: usize,

    /// Weight layout the variants read.
    #[arg(long, value_enum, default_value_t = LayoutArg::Padded)]
    pub layout: LayoutArg,

    /// Seed of the weights, activations and sampled parity outputs.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,

    /// Also write every result as one JSON object per line to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    pub gpu: usize,

    /// Skip the cuBLAS bf16/f16 baselines.
    #[arg(long)]
    pub no_cublas: bool,

    /// Output type of the cuBLAS baselines.
    #[arg(long, value_enum, default_value_t = CublasOutArg::Input)]
    pub cublas_out: CublasOutArg,

    /// Outputs drawn at random for the parity check before timing (plus the first and last token and row).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PARITY_SAMPLES, value_parser = parse_samples)]
    pub parity_samples: usize,

    /// Keep compiled cubins in DIR between runs.
    #[arg(long, value_name = "DIR")]
    pub cubin_cache: Option<PathBuf>,

    /// Reuse one buffer set per contestant for every call, so that weights which fit stay in L2 (how ggml's
    /// test-backend-ops times, reusing its tensors); by default every call reads cold weights.
    #[arg(long)]
    pub warm_weights: bool,

    /// Where to time the read floor: a kernel that only reads the matrix's bytes in the run's layout (16-byte
    /// loads striding the grid, 8 geometries, the fastest kept), timed like a call on cold copies; every
    /// variant's row there, and the picks table, gives its time over the floor's ('x read floor'). `decode`:
    /// shapes of at most 32 tokens.
    #[arg(long, value_enum, default_value_t = FloorArg::Decode)]
    pub floor: FloorArg,

    /// Instead of shapes, one Llama-3-8B decode step as engines run it: its 224 q6_K matmuls (32 layers x q,
    /// k, v, o, gate, up, down), each on weights of its own (6.11 GB padded, 5.73 GB raw: --layout), called
    /// through the library with the config's picks on one stream, captured once in a CUDA graph and replayed,
    /// and launched directly. Reports the step's time, tokens per second, the weight bytes and their share of
    /// the copy rate, and whether a replay gives the direct calls' bits. Needs that much free device memory.
    #[arg(
        long,
        conflicts_with_all = ["shapes", "variant", "all", "ab", "prefill", "picks", "warm_weights"]
    )]
    pub decode_step: bool,

    /// With --decode-step: the token counts, one step each, e.g. 1,8,32 (default 1).
    #[arg(long, value_name = "N,...", value_parser = super::decode_step::parse_token_list, requires = "decode_step")]
    pub tokens: Option<super::decode_step::TokenList>,
}

/// The variants to time: `--ab A B`, else the `--variant`s, else every one with `--all`, else the default set.
pub fn select_variants(
    args: &BenchArgs,
    all: &[VariantDescription],
) -> Result<Vec<VariantDescription>, CliError> {
    if let Some(ab) = &args.ab {
        let a = find_variant(all, &ab[0])?;
        let b = find_variant(all, &ab[1])?;
        if a.name == b.name {
            return Err(format!(
                "--ab needs two different variants, but '{}' and '{}' are both '{}'",
                ab[0], ab[1], a.name
            )
            .into());
        }
        return Ok(vec![a.clone(), b.clone()]);
    }
    if !args.variant.is_empty() {
        return super::variants_named(all, args.variant.iter().map(String::as_str));
    }
    if args.all {
        return Ok(all.to_vec());
    }
    Ok(default_variants(all))
}

/// For `--picks`: the config's pick at each shape on this GPU's architecture and the run's layout, each added to
/// `descs` unless it is there already. Returns the config's source and the picks (or why a shape has none).
#[allow(clippy::type_complexity)]
fn add_picks(
    args: &BenchArgs,
    all: &[VariantDescription],
    gpu: &Gpu,
    cfg: &BenchConfig,
    descs: &mut Vec<VariantDescription>,
) -> Result<(String, Vec<(Shape, Result<String, String>)>), CliError> {
    let arch = arch_from_str(gpu.arch()).ok_or_else(|| {
        format!(
            "{}; --picks needs one of those",
            crate::codegen::arch::unknown_gpu_sentence(gpu.info().compute_capability)
        )
    })?;
    let (config, source) = super::config::load(args.config.as_deref(), all)?;
    let mut picks = Vec::with_capacity(cfg.shapes.len());
    for shape in &cfg.shapes {
        let (m, n, k) = (shape.m as u64, shape.n as u64, shape.k as u64);
        let pick = match config.select(arch, cfg.layout, m, n, k) {
            Ok(selection) => {
                super::add_once(descs, selection.variant);
                Ok(selection.variant.name.to_string())
            }
            Err(e) => Err(e.to_string()),
        };
        picks.push((*shape, pick));
    }
    Ok((source, picks))
}

/// The shapes to time: `--shape`s or the default list, plus the prefill shapes with `--prefill`.
pub fn select_shapes(args: &BenchArgs) -> Vec<Shape> {
    let mut shapes = if args.shapes.is_empty() {
        default_shapes()
    } else {
        args.shapes.clone()
    };
    if args.prefill {
        shapes.extend(prefill_shapes());
    }
    dedup_shapes(shapes)
}

/// The library configuration the arguments describe.
pub fn config(args: &BenchArgs) -> BenchConfig {
    BenchConfig {
        shapes: select_shapes(args),
        warmup: args.warmup,
        repeats: args.repeats,
        layout: args.layout.into(),
        seed: args.seed,
        cublas: !args.no_cublas,
        cublas_out: match args.cublas_out {
            CublasOutArg::Input => CublasOut::Input,
            CublasOutArg::F32 => CublasOut::F32,
        },
        parity_samples: args.parity_samples,
        warm_weights: args.warm_weights,
        floor: args.floor.into(),
        cubin_cache: args.cubin_cache.clone(),
    }
}

/// JSON lines for the picks (with `--picks`), the prefill and A/B verdicts (beside the report's own lines),
/// written by serde_json.
fn verdict_json_lines(
    report: &BenchReport,
    args: &BenchArgs,
    ab: Option<(&str, &str)>,
    picks: Option<&[(Shape, Result<String, String>)]>,
) -> Vec<String> {
    let i = &report.info;
    // The provenance every line starts with, then the line's own keys (serde_json keeps their order).
    let line = |kind: &str, body: serde_json::Value| {
        let mut object = serde_json::Map::new();
        object.insert("mmqgen_bench".into(), json!(1));
        object.insert("kind".into(), json!(kind));
        object.insert("date".into(), json!(i.date));
        object.insert("commit".into(), json!(i.commit));
        object.insert("gpu".into(), json!(i.gpu));
        object.insert("driver".into(), json!(i.driver_release));
        object.insert("nvrtc".into(), json!(i.nvrtc));
        if let serde_json::Value::Object(fields) = body {
            object.extend(fields);
        }
        serde_json::Value::Object(object).to_string()
    };
    let mut lines = Vec::new();
    for (shape, pick) in picks.unwrap_or_default() {
        let measured = report.shapes.iter().find(|s| s.shape == *shape);
        let median = pick.as_ref().ok().and_then(|name| {
            measured
                .and_then(|s| s.variants.iter().find(|v| v.name == *name))
                .and_then(|v| v.total.median())
        });
        let floor = measured.and_then(|s| s.floor_us());
        let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
        lines.push(line(
            "pick",
            json!({
                "m": shape.m,
                "n": shape.n,
                "k": shape.k,
                "layout": report.config.layout.keyword(),
                "variant": pick.as_ref().ok(),
                "error": pick.as_ref().err(),
                "median_us": median,
                "read_floor_us": floor,
                "x_read_floor": finite(median.zip(floor).map(|(m, f)| m / f)),
            }),
        ));
    }
    if args.prefill {
        for tokens in PREFILL_TOKENS {
            let p = report.prefill(tokens, None);
            let matmuls: Vec<serde_json::Value> = p
                .matmuls
                .iter()
                .map(|m| {
                    json!({
                        "matmul": m.name,
                        "m": m.shape.m,
                        "n": m.shape.n,
                        "k": m.shape.k,
                        "variant": m.variant,
                        "median_us": m.us,
                        "cublas_bf16_us": m.cublas_bf16_us,
                    })
                })
                .collect();
            lines.push(line(
                "prefill",
                json!({
                    "tokens": tokens,
                    "layer_us": p.layer_us,
                    "tokens_per_s": p.tokens_per_s(),
                    "cublas_bf16_layer_us": p.cublas_layer_us,
                    "cublas_bf16_tokens_per_s": p.cublas_tokens_per_s(),
                    "matmuls": matmuls,
                }),
            ));
        }
    }
    if let Some((a, b)) = ab {
        let r = report.ab(a, b);
        for (shape, v) in &r.shapes {
            let mut body = json!({"a": a, "b": b, "m": shape.m, "n": shape.n, "k": shape.k});
            let verdict = match v {
                Ok(v) => json!({"a_us": v.a_us, "b_us": v.b_us, "gain": v.gain, "lands": v.lands}),
                Err(e) => json!({"lands": false, "error": e}),
            };
            if let (Some(body), serde_json::Value::Object(verdict)) =
                (body.as_object_mut(), verdict)
            {
                body.extend(verdict);
            }
            lines.push(line("ab", body));
        }
        let overall = match &r.overall {
            Some(v) => json!({
                "a": a, "b": b, "a_us": v.a_us, "b_us": v.b_us, "gain": v.gain, "lands": v.lands,
                "shapes_without_verdict": r.missing,
            }),
            None => json!({"a": a, "b": b, "lands": false}),
        };
        lines.push(line("ab_overall", overall));
    }
    lines
}

/// `--json FILE` of a bench run: created before the run, written once after it.
pub(super) struct JsonFile<'a> {
    path: &'a std::path::Path,
    file: std::fs::File,
}

impl<'a> JsonFile<'a> {
    pub(super) fn create(
        path: Option<&'a std::path::Path>,
    ) -> Result<Option<JsonFile<'a>>, CliError> {
        let Some(path) = path else { return Ok(None) };
        let file = std::fs::File::create(path)
            .map_err(|e| format!("cannot write the JSON file {}: {e}", path.display()))?;
        Ok(Some(JsonFile { path, file }))
    }

    /// Writes `lines` a JSON object each; says why on stderr and returns false when it cannot.
    pub(super) fn write_lines(&mut self, lines: &[String]) -> bool {
        let mut text = lines.join("\n");
        text.push('\n');
        match self.file.write_all(text.as_bytes()) {
            Ok(()) => true,
            Err(e) => {
                eprintln!(
                    "mmqgen bench: cannot write the JSON file {}: {e}",
                    self.path.display()
                );
                false
            }
        }
    }
}

pub fn run(args: &BenchArgs, all: &[VariantDescription]) -> Result<ExitCode, CliError> {
    if args.decode_step {
        return super::decode_step::run(args, all);
    }
    let mut descs = select_variants(args, all)?;
    let cfg = config(args);
    let ab = args
        .ab
        .as_ref()
        .map(|_| (descs[0].name.to_string(), descs[1].name.to_string()));
    let gpu = Gpu::open(args.gpu)?;
    let picks = if args.picks {
        Some(add_picks(args, all, &gpu, &cfg, &mut descs)?)
    } else {
        None
    };
    // Open the JSON file before the run: a path that cannot be written should not cost a whole run.
    let mut json = JsonFile::create(args.json.as_deref())?;
    if cfg!(debug_assertions) {
        eprintln!(
            "bench: WARNING: this mmqgen is an unoptimized build; the CPU side (inputs, reference samples, \
             conversions) runs about 10x slower, so the run takes much longer (GPU times are unaffected): use \
             cargo build --release"
        );
    }
    eprintln!(
        "bench: {} variant(s) x {} shape(s), {} warm-up + {} timed calls each, interleaved",
        descs.len(),
        cfg.shapes.len(),
        cfg.warmup,
        cfg.repeats
    );
    let mut stderr = std::io::stderr();
    let report = run_bench(&gpu, &descs, &cfg, &mut |line: &str| {
        let _ = writeln!(stderr, "{line}");
    })?;

    let mut failed = false;
    if let Some(json) = json.as_mut() {
        let mut lines = report.json_lines();
        lines.extend(verdict_json_lines(
            &report,
            args,
            ab.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
            picks.as_ref().map(|(_, p)| p.as_slice()),
        ));
        failed |= !json.write_lines(&lines);
    }

    let notes = report.notes();
    for n in notes
        .iter()
        .filter(|n| n.starts_with("SUSPECT") || n.starts_with("RUN STOPPED"))
    {
        eprintln!("mmqgen bench: {n}");
    }
    if !notes.is_empty() {
        println!("Notes:");
        for n in &notes {
            println!("- {n}");
        }
        println!();
    }
    if args.prefill {
        for tokens in PREFILL_TOKENS {
            println!("{}", report.prefill(tokens, None).markdown());
        }
    }
    if let Some((a, b)) = &ab {
        println!("{}", report.ab(a, b).text());
    }
    println!("{}\n", report.legend());
    print!("{}", report.markdown_table());
    if let Some((source, picks)) = &picks {
        println!(
            "\nThe pick of {source} at each shape ({} layout):\n",
            cfg.layout
        );
        print!("{}", report.picks_table(picks));
    }

    failed |= !report.is_clean();
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::gpu::weights::Layout;

    /// `mmqgen bench ARGV`'s arguments, or clap's refusal (also the decode step's tests').
    pub(in crate::cli) fn parse(argv: &[&str]) -> Result<BenchArgs, String> {
        crate::cli::parse_args::<BenchArgs>(std::iter::once("bench").chain(argv.iter().copied()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn picks_take_an_optional_config_and_no_ab() {
        let a = parse(&["--picks", "--config", "mine.toml"]).unwrap();
        assert!(a.picks);
        assert_eq!(a.config.as_deref(), Some(std::path::Path::new("mine.toml")));
        assert!(
            parse(&["--config", "mine.toml"]).is_err(),
            "--config needs --picks"
        );
        assert!(parse(&["--picks", "--ab", "a", "b"]).is_err());
    }

    #[test]
    fn defaults() {
        let a = parse(&[]).unwrap();
        assert_eq!((a.repeats, a.warmup, a.seed), (20, 3, 1));
        assert_eq!(a.layout, LayoutArg::Padded);
        assert_eq!(a.parity_samples, 1024);
        assert!(a.shapes.is_empty() && a.variant.is_empty() && a.ab.is_none());
        let c = config(&a);
        assert_eq!(c.shapes, default_shapes());
        assert!(c.cublas);
        assert_eq!(c.cublas_out, CublasOut::Input);
    }

    #[test]
    fn shapes_parse_and_override_the_defaults() {
        let a = parse(&["--shape", "4096,512,4096", "--shape", " 1, 1 ,256"]).unwrap();
        assert_eq!(
            a.shapes,
            vec![Shape::new(4096, 512, 4096), Shape::new(1, 1, 256)]
        );
        assert_eq!(select_shapes(&a), a.shapes);
        let e = parse(&["--shape", "4096,512"]).unwrap_err();
        assert!(e.contains("is not a shape: write m,n,k"), "{e}");
        let e = parse(&["--shape", "10,1,300"]).unwrap_err();
        assert!(e.contains("K = 300 is not a multiple of 256"), "{e}");
        // --prefill adds the layer's shapes once.
        let a = parse(&["--shape", "4096,512,4096", "--prefill"]).unwrap();
        let s = select_shapes(&a);
        assert_eq!(s[0], Shape::new(4096, 512, 4096));
        assert_eq!(s.len(), prefill_shapes().len());
        let a = parse(&["--prefill"]).unwrap();
        assert_eq!(select_shapes(&a).len(), 18);
    }

    #[test]
    fn variants_and_ab() {
        let all = crate::catalogue::all();
        let a = parse(&[]).unwrap();
        assert_eq!(select_variants(&a, &all).unwrap(), default_variants(&all));
        let a = parse(&["--all"]).unwrap();
        assert_eq!(select_variants(&a, &all).unwrap().len(), all.len());
        let a = parse(&["--variant", "r41", "--variant", "r56", "--variant", "r41"]).unwrap();
        let v = select_variants(&a, &all).unwrap();
        assert_eq!(
            v.iter().map(|v| v.name.as_ref()).collect::<Vec<&str>>(),
            ["r41", "r56"]
        );
        let a = parse(&["--variant", "nope"]).unwrap();
        let e = select_variants(&a, &all).unwrap_err().to_string();
        assert!(e.starts_with("no variant named 'nope'"), "{e}");

        let a = parse(&["--ab", "r41", "r56"]).unwrap();
        assert_eq!(a.ab, Some(vec!["r41".to_string(), "r56".to_string()]));
        let v = select_variants(&a, &all).unwrap();
        assert_eq!((v[0].name.as_ref(), v[1].name.as_ref()), ("r41", "r56"));
        let canonical = crate::codegen::canonical_name(&crate::catalogue::R41);
        let a = parse(&["--ab", "r41", &canonical]).unwrap();
        let e = select_variants(&a, &all).unwrap_err().to_string();
        assert!(e.contains("two different variants"), "{e}");

        assert!(parse(&["--ab", "r41"]).is_err(), "--ab takes two names");
        assert!(parse(&["--ab", "r41", "r56", "--variant", "r42"]).is_err());
        assert!(parse(&["--ab", "r41", "r56", "--all"]).is_err());
        assert!(parse(&["--all", "--variant", "r42"]).is_err());
    }

    #[test]
    fn the_read_floor_is_timed_at_decode_shapes_unless_told() {
        assert_eq!(config(&parse(&[]).unwrap()).floor, FloorMode::Decode);
        assert_eq!(
            config(&parse(&["--floor", "all"]).unwrap()).floor,
            FloorMode::All
        );
        assert_eq!(
            config(&parse(&["--floor", "off"]).unwrap()).floor,
            FloorMode::Off
        );
        let e = parse(&["--floor", "sometimes"]).unwrap_err();
        assert!(
            e.contains("invalid value 'sometimes'") && e.contains("decode"),
            "{e}"
        );
    }

    #[test]
    fn numbers_are_checked() {
        assert!(parse(&["--repeats", "0"])
            .unwrap_err()
            .contains("no median"));
        assert_eq!(parse(&["--repeats", "50"]).unwrap().repeats, 50);
        assert!(parse(&["--parity-samples", "100"])
            .unwrap_err()
            .contains("too few"));
        assert_eq!(
            parse(&["--parity-samples", "4096"]).unwrap().parity_samples,
            4096
        );
        let a = parse(&["--layout", "raw", "--cublas-out", "f32", "--no-cublas"]).unwrap();
        let c = config(&a);
        assert_eq!(
            (c.layout, c.cublas_out, c.cublas),
            (Layout::Raw, CublasOut::F32, false)
        );
    }
}
