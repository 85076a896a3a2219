//! Reading Nsight Compute's output the way the seed read it (r41-r43): the throughput plane (L1TEX, L2, DRAM,
//! issue slots) beside the stall plane (long scoreboard, barrier, MIO throttle, issue activity, occupancy),
//! and the SASS lines the stall samples are booked to. `mmqgen profile` (`crate::cli::profile`) runs `ncu`;
//! this module only parses and renders what it printed.

use std::fmt::Write as _;

/// The metric set of pass 1, in the order the planes print them.
pub const METRICS: &[&str] = &[
    L1TEX,
    L2,
    DRAM,
    ISSUE_SLOTS,
    LONG_SCOREBOARD,
    BARRIER,
    MIO_THROTTLE,
    ISSUE_ACTIVE,
    OCCUPANCY,
    DURATION,
];
const L1TEX: &str = "l1tex__throughput.avg.pct_of_peak_sustained_active";
const L2: &str = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
const DRAM: &str = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
const ISSUE_SLOTS: &str = "sm__inst_issued.avg.pct_of_peak_sustained_active";
const LONG_SCOREBOARD: &str =
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio";
const BARRIER: &str = "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio";
const MIO_THROTTLE: &str = "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio";
const ISSUE_ACTIVE: &str = "smsp__issue_active.avg.pct_of_peak_sustained_active";
const OCCUPANCY: &str = "sm__warps_active.avg.pct_of_peak_sustained_active";
const DURATION: &str = "gpu__time_duration.sum";

/// One profiled launch: its kernel name and every metric ncu reported, with units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelMetrics {
    pub kernel: String,
    /// (metric name, unit, value) in the order ncu gave them; a value ncu left blank or `n/a` is absent.
    pub metrics: Vec<(String, String, Option<f64>)>,
}

impl KernelMetrics {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|(n, _, _)| n == name)
            .and_then(|(_, _, v)| *v)
    }

    fn unit(&self, name: &str) -> &str {
        self.metrics
            .iter()
            .find(|(n, _, _)| n == name)
            .map_or("", |(_, u, _)| u.as_str())
    }
}

/// Splits one CSV line (ncu quotes every field; `""` inside quotes is a quote).
fn split_csv_line(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// A number as ncu prints it (`1,234.5`; `n/a` and blanks are none).
fn parse_number(s: &str) -> Option<f64> {
    let cleaned: String = s.trim().chars().filter(|&c| c != ',').collect();
    cleaned.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The CSV lines of ncu's stdout, from its header (`"ID",...`) on; `==PROF==` lines and whatever the profiled
/// program printed are skipped.
fn csv_lines(text: &str) -> Vec<&str> {
    let mut lines = text.lines().map(str::trim_end);
    let Some(header) = lines.find(|l| l.starts_with("\"ID\",")) else {
        return Vec::new();
    };
    let mut out = vec![header];
    out.extend(lines.filter(|l| l.starts_with('"')));
    out
}

/// Parses `ncu --csv --page raw` (header row of metric names, a units row, one row per launch); also takes the
/// long `--page details` layout (`"Metric Name","Metric Unit","Metric Value"` columns, one row per metric).
pub fn parse_raw_csv(text: &str) -> Vec<KernelMetrics> {
    let lines = csv_lines(text);
    let Some((header, rest)) = lines.split_first() else {
        return Vec::new();
    };
    let header = split_csv_line(header);
    let col = |name: &str| header.iter().position(|h| h == name);
    let kernel_col = col("Kernel Name");
    if let (Some(id_col), Some(name_col), Some(unit_col), Some(value_col)) = (
        col("ID"),
        col("Metric Name"),
        col("Metric Unit"),
        col("Metric Value"),
    ) {
        let mut out: Vec<(String, KernelMetrics)> = Vec::new();
        for row in rest.iter().map(|l| split_csv_line(l)) {
            let (Some(id), Some(name)) = (row.get(id_col), row.get(name_col)) else {
                continue;
            };
            if name.is_empty() {
                continue;
            }
            let index = match out.iter().position(|(i, _)| i == id) {
                Some(i) => i,
                None => {
                    out.push((
                        id.clone(),
                        KernelMetrics {
                            kernel: kernel_col
                                .and_then(|c| row.get(c))
                                .cloned()
                                .unwrap_or_default(),
                            metrics: Vec::new(),
                        },
                    ));
                    out.len() - 1
                }
            };
            out[index].1.metrics.push((
                name.clone(),
                row.get(unit_col).cloned().unwrap_or_default(),
                row.get(value_col).and_then(|v| parse_number(v)),
            ));
        }
        return out.into_iter().map(|(_, k)| k).collect();
    }
    // Raw page: metric columns are those whose name has a `__` (ncu's unit__counter naming); the row after the
    // header holds the units (its ID field is blank).
    let metric_cols: Vec<usize> = (0..header.len())
        .filter(|&i| header[i].contains("__"))
        .collect();
    let mut rows = rest.iter().map(|l| split_csv_line(l)).peekable();
    let units = match rows.peek() {
        Some(r) if r.first().is_some_and(|f| f.is_empty()) => rows.next().unwrap_or_default(),
        _ => Vec::new(),
    };
    rows.map(|row| KernelMetrics {
        kernel: kernel_col
            .and_then(|c| row.get(c))
            .cloned()
            .unwrap_or_default(),
        metrics: metric_cols
            .iter()
            .map(|&c| {
                (
                    header[c].clone(),
                    units.get(c).cloned().unwrap_or_default(),
                    row.get(c).and_then(|v| parse_number(v)),
                )
            })
            .collect(),
    })
    .collect()
}

fn cell(value: Option<f64>, suffix: &str) -> String {
    match value {
        Some(v) => format!("{v:.1}{suffix}"),
        None => "n/a".to_string(),
    }
}

/// The two planes side by side, one metric per line in each column.
pub fn render_planes(k: &KernelMetrics) -> String {
    let no_eligible = k.get(ISSUE_ACTIVE).map(|v| 100.0 - v);
    let throughput = [
        ("L1TEX", cell(k.get(L1TEX), " %")),
        ("L2", cell(k.get(L2), " %")),
        ("DRAM", cell(k.get(DRAM), " %")),
        ("issue slots", cell(k.get(ISSUE_SLOTS), " %")),
        ("", String::new()),
    ];
    let stall = [
        (
            "long scoreboard",
            cell(k.get(LONG_SCOREBOARD), " warps/issue"),
        ),
        ("barrier", cell(k.get(BARRIER), " warps/issue")),
        ("MIO throttle", cell(k.get(MIO_THROTTLE), " warps/issue")),
        ("no eligible", cell(no_eligible, " % of cycles")),
        ("occupancy", cell(k.get(OCCUPANCY), " % achieved")),
    ];
    let mut out = String::new();
    let _ = writeln!(out, "kernel {}", k.kernel);
    if let Some(t) = k.get(DURATION) {
        let unit = k.unit(DURATION);
        let unit = if unit.is_empty() { "ns" } else { unit };
        let _ = writeln!(out, "duration {t:.0} {unit}");
    }
    let _ = writeln!(out, "{:<32}| stall plane", "throughput plane");
    let _ = writeln!(out, "{:-<32}+{:-<40}", "", "");
    for ((tn, tv), (sn, sv)) in throughput.iter().zip(stall.iter()) {
        let left = if tn.is_empty() {
            String::new()
        } else {
            format!("{tn:<14}{tv:>16}")
        };
        let _ = writeln!(out, "{left:<32}| {sn:<16}{sv:>22}");
    }
    out
}

/// One SASS line of the source page with its stall samples, and the line of the generated CUDA it came from
/// (when the page carries the CUDA source beside the SASS).
#[derive(Clone, Debug, PartialEq)]
pub struct SassLine {
    pub address: String,
    pub source: String,
    pub samples: f64,
    pub cuda_line: Option<u32>,
}

/// One line of the generated CUDA with the stall samples of its SASS lines.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaLine {
    pub line: u32,
    pub source: String,
    pub samples: f64,
}

/// The source page, busiest lines first: SASS lines always, CUDA lines when ncu found the source.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourcePage {
    pub sass: Vec<SassLine>,
    pub cuda: Vec<CudaLine>,
}

/// Parses `ncu --page source --csv` with `--print-source sass` (a header row naming an address column, a
/// `Source` column and a `Warp Stall Sampling (All Samples)` column, matched loosely, one row per instruction) or
/// `--print-source cuda,sass` (a `Line No` column first and two `Source` columns: each CUDA line's row, with its
/// instructions' samples summed, then its instructions' rows with an empty line number; checked against ncu on
/// the H200 on 2026-12-02, decode log 44). Returns the `top` lines of each kind by samples, or none when the header is not there
/// (the caller then prints ncu's lines as they came).
pub fn parse_source_page(text: &str, top: usize) -> Option<SourcePage> {
    let mut lines = text.lines().map(str::trim_end);
    let header_line =
        lines.find(|l| l.starts_with('"') && l.contains("Source") && l.contains("Warp Stall"))?;
    let header = split_csv_line(header_line);
    let samples_col = header
        .iter()
        .position(|h| h.starts_with("Warp Stall Sampling"))?;
    let address_col = header.iter().position(|h| h.contains("Address"));
    let line_col = header.iter().position(|h| h == "Line No");
    let sources: Vec<usize> = (0..header.len())
        .filter(|&i| header[i] == "Source")
        .collect();
    // With CUDA lines the SASS text is the second `Source` column, else the only one.
    let sass_source_col = *sources
        .get(usize::from(line_col.is_some()))
        .or(sources.first())?;
    let mut page = SourcePage::default();
    let mut current_line = None;
    for text_row in lines.filter(|l| l.starts_with('"')) {
        if line_col.is_some() {
            if let Some(line) = parse_cuda_row(text_row, samples_col) {
                current_line = Some(line.line);
                if line.samples > 0.0 {
                    page.cuda.push(line);
                }
                continue;
            }
        }
        let row = split_csv_line(text_row);
        let Some(samples) = row.get(samples_col).and_then(|v| parse_number(v)) else {
            continue;
        };
        if samples > 0.0 {
            page.sass.push(SassLine {
                address: address_col
                    .and_then(|c| row.get(c))
                    .cloned()
                    .unwrap_or_default(),
                source: row
                    .get(sass_source_col)
                    .map_or("", |s| s.trim())
                    .to_string(),
                samples,
                cuda_line: current_line,
            });
        }
    }
    page.sass.sort_by(|a, b| b.samples.total_cmp(&a.samples));
    page.sass.truncate(top);
    page.cuda.sort_by(|a, b| b.samples.total_cmp(&a.samples));
    page.cuda.truncate(top);
    Some(page)
}

/// A CUDA line's row of the `cuda,sass` page: `"<line>","<source>","-","-","<counters>",...`. ncu writes the source
/// without doubling its quotes (`asm("..." : "=r"(x))` comes as it is), so the row is cut at the first
/// `","-","-","` (its empty address and SASS columns) rather than read as CSV; the counters after it are plain.
fn parse_cuda_row(row: &str, samples_col: usize) -> Option<CudaLine> {
    const SEPARATOR: &str = "\",\"-\",\"-\",\"";
    let rest = row.strip_prefix('"')?;
    let (line, rest) = rest.split_once("\",\"")?;
    let line = line.parse::<u32>().ok()?;
    let (source, counters) = rest.split_once(SEPARATOR)?;
    // The counters start at the fifth column (line, source, address, SASS source).
    let counters: Vec<&str> = counters.trim_end_matches('"').split("\",\"").collect();
    let samples = parse_number(counters.get(samples_col.checked_sub(4)?)?)?;
    Some(CudaLine {
        line,
        source: source.trim().to_string(),
        samples,
    })
}

/// The share of `samples` in `total`, in percent.
fn share(samples: f64, total: f64) -> f64 {
    if total > 0.0 {
        100.0 * samples / total
    } else {
        0.0
    }
}

/// Renders the top stall-sampled lines, CUDA first when there are any, each with its share of the samples shown.
pub fn render_source_page(page: &SourcePage) -> String {
    let mut out = String::new();
    if !page.cuda.is_empty() {
        let total: f64 = page.cuda.iter().map(|l| l.samples).sum();
        let _ = writeln!(
            out,
            "CUDA lines of the generated source by stall samples (top {}):",
            page.cuda.len()
        );
        for l in &page.cuda {
            let _ = writeln!(
                out,
                "{:>8} {:>5.1}%  line {:<5} {}",
                l.samples,
                share(l.samples, total),
                l.line,
                l.source
            );
        }
        out.push('\n');
    }
    let total: f64 = page.sass.iter().map(|l| l.samples).sum();
    let _ = writeln!(
        out,
        "SASS lines by stall samples (top {}):",
        page.sass.len()
    );
    for l in &page.sass {
        let line = l
            .cuda_line
            .map_or(String::new(), |n| format!("line {n:<5} "));
        let _ = writeln!(
            out,
            "{:>8} {:>5.1}%  {:<8} {line}{}",
            l.samples,
            share(l.samples, total),
            l.address,
            l.source
        );
    }
    out
}

/// A pass-1 page as `ncu --csv --page raw` prints it around a parity child's own output (tests).
#[cfg(test)]
pub(crate) const RAW_SAMPLE: &str = concat!(
    "==PROF== Connected to process 4242 (/work/target/release/mmqgen)\n",
    "==PROF== Profiling \"q6k_x_raw\" - 0: 0%....50%....100% - 9 passes\n",
    "parity-row\tq6k\t1000,77,2816\tpadded\tpass\n",
    "==PROF== Disconnected from process 4242\n",
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",",
    "\"Grid Size\",\"Device\",\"CC\",",
    "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"gpu__time_duration.sum\",",
    "\"l1tex__throughput.avg.pct_of_peak_sustained_active\",",
    "\"lts__throughput.avg.pct_of_peak_sustained_elapsed\",",
    "\"sm__inst_issued.avg.pct_of_peak_sustained_active\",",
    "\"sm__warps_active.avg.pct_of_peak_sustained_active\",",
    "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\",",
    "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\",",
    "\"smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio\",",
    "\"smsp__issue_active.avg.pct_of_peak_sustained_active\"\n",
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"%\",\"usecond\",\"%\",\"%\",\"%\",\"%\",\"ratio\",\"ratio\",\"ratio\",\"%\"\n",
    "\"0\",\"4242\",\"mmqgen\",\"127.0.0.1\",\"q6k_x_padded\",\"1\",\"7\",\"(256, 1, 1)\",\"(16, 8, 1)\",\"0\",\"9.0\",",
    "\"12.34\",\"1,234.56\",\"61.2\",\"40.5\",\"33.3\",\"45.6\",\"0.52\",\"2.71\",\"0.08\",\"35.0\"\n",
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_raw_page() {
        let kernels = parse_raw_csv(RAW_SAMPLE);
        assert_eq!(kernels.len(), 1);
        let k = &kernels[0];
        assert_eq!(k.kernel, "q6k_x_padded");
        assert_eq!(k.get(DRAM), Some(12.34));
        assert_eq!(k.get(DURATION), Some(1234.56));
        assert_eq!(k.unit(DURATION), "usecond");
        assert_eq!(k.get(LONG_SCOREBOARD), Some(2.71));
        assert_eq!(k.get(ISSUE_ACTIVE), Some(35.0));
        for metric in METRICS {
            assert!(k.get(metric).is_some(), "{metric} missing");
        }
    }

    #[test]
    fn parses_the_details_layout_too() {
        let text = concat!(
            "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Section Name\",",
            "\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n",
            "\"0\",\"1\",\"mmqgen\",\"h\",\"k_padded\",\"Command line profiler metrics\",",
            "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"7.5\"\n",
            "\"0\",\"1\",\"mmqgen\",\"h\",\"k_padded\",\"Command line profiler metrics\",",
            "\"gpu__time_duration.sum\",\"nsecond\",\"2,048\"\n",
        );
        let kernels = parse_raw_csv(text);
        assert_eq!(kernels.len(), 1);
        assert_eq!(kernels[0].get(DRAM), Some(7.5));
        assert_eq!(kernels[0].get(DURATION), Some(2048.0));
    }

    #[test]
    fn no_header_is_no_kernel() {
        assert!(parse_raw_csv("==PROF== No kernels were profiled.\n").is_empty());
    }

    #[test]
    fn quoted_fields_keep_their_commas() {
        assert_eq!(
            split_csv_line("\"a\",\"(1, 2)\",\"say \"\"hi\"\"\",\"\""),
            vec!["a", "(1, 2)", "say \"hi\"", ""]
        );
    }

    #[test]
    fn renders_both_planes_side_by_side() {
        let k = parse_raw_csv(RAW_SAMPLE).remove(0);
        let text = render_planes(&k);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "kernel q6k_x_padded");
        assert_eq!(lines[1], "duration 1235 usecond");
        assert!(lines[2].starts_with("throughput plane") && lines[2].contains("| stall plane"));
        let row = |label: &str| {
            *lines
                .iter()
                .find(|l| l.contains(label))
                .unwrap_or_else(|| panic!("no {label} line in\n{text}"))
        };
        assert!(row("L1TEX").contains("61.2 %") && row("L1TEX").contains("long scoreboard"));
        assert!(row("L1TEX").contains("2.7 warps/issue"));
        assert!(row("L2 ").contains("40.5 %") && row("L2 ").contains("barrier"));
        assert!(row("DRAM").contains("12.3 %") && row("DRAM").contains("MIO throttle"));
        assert!(
            row("issue slots").contains("33.3 %")
                && row("issue slots").contains("65.0 % of cycles")
        );
        assert!(row("occupancy").contains("45.6 % achieved"));
        // Every row splits its planes at the same column.
        let bar = lines[2].find('|');
        assert!(lines[4..].iter().all(|l| l.find('|') == bar), "{text}");
    }

    #[test]
    fn missing_metrics_show_as_na() {
        let k = KernelMetrics {
            kernel: "k".into(),
            metrics: vec![(L1TEX.into(), "%".into(), None)],
        };
        let text = render_planes(&k);
        assert!(text.contains("n/a"));
        assert!(!text.contains("duration"));
    }

    #[test]
    fn picks_the_top_stall_sampled_sass_lines() {
        let text = concat!(
            "==PROF== Connected to process 1\n",
            "\"# Address\",\"Source\",\"Warp Stall Sampling (All Samples)\",",
            "\"Warp Stall Sampling (Not-issued Samples)\",\"Instructions Executed\"\n",
            "\"0x7f00\",\"LDG.E.128 R4, desc[UR4][R2.64]\",\"120\",\"110\",\"64\"\n",
            "\"0x7f10\",\"IMAD R0, R1, R2, R3\",\"3\",\"1\",\"64\"\n",
            "\"0x7f20\",\"BAR.SYNC.DEFER_BLOCKING 0x0\",\"1,050\",\"1,000\",\"64\"\n",
            "\"0x7f30\",\"EXIT\",\"0\",\"0\",\"64\"\n",
        );
        let page = parse_source_page(text, 2).unwrap();
        assert_eq!(page.sass.len(), 2);
        assert!(page.cuda.is_empty());
        assert_eq!(page.sass[0].source, "BAR.SYNC.DEFER_BLOCKING 0x0");
        assert_eq!(page.sass[0].samples, 1050.0);
        assert_eq!(page.sass[0].cuda_line, None);
        assert_eq!(page.sass[1].address, "0x7f00");
        let rendered = render_source_page(&page);
        assert!(
            rendered.contains("BAR.SYNC")
                && rendered.contains("SASS lines by stall samples (top 2)")
        );
        assert!(!rendered.contains("CUDA lines"));
        assert_eq!(parse_source_page("no csv here", 10), None);
    }

    /// An excerpt of what ncu printed on the H200 (2026-12-02, decode log 44) for `--print-source cuda,sass`, trimmed to
    /// the first columns.
    const CUDA_SASS_SAMPLE: &str = concat!(
        "\"File Path\",\"/tmp/mmqgen-profile-source-1/q6k_x.cu\"\n",
        "\"Function Name\",\"q6k_x_padded\"\n",
        "\"Line No\",\"Source\",\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\",",
        "\"Warp Stall Sampling (Not-issued Samples)\",\"# Samples\",\"Instructions Executed\"\n",
        // ncu does not double the quotes of the source (and a counter column further on may hold "-" too).
        "\"66\",\"asm(\"{ .reg .f16 h; cvt.f32.f16 %0, h; }\" : \"=f\"(value));\",\"-\",\"-\",\"2\",\"0\",\"2\",\"-\",\"-\",\"7\"\n",
        "\"\",\"\",\"0x7f46437abf40\",\"      HADD2.F32 R50, -RZ, R50.H0_H0\",\"0\",\"0\",\"0\",\"7168\"\n",
        "\"\",\"\",\"...\",\"...\",\"-\",\"-\",\"-\",\"-\"\n",
        "\"\",\"\",\"0x7f46437abf90\",\"      HADD2.F32 R28, -RZ, R28.H0_H0\",\"2\",\"0\",\"2\",\"7168\"\n",
        "\"448\",\"        barrier_wait(token_barriers + s % RING_STAGES, (s / RING_STAGES) & 1);\",\"-\",\"-\",\"353\",\"350\",\"353\",\"9000\"\n",
        "\"\",\"\",\"0x7f46437ac100\",\"@!P0  BRA 0x7f46437ad000\",\"353\",\"350\",\"353\",\"9000\"\n",
        "\"449\",\"        const uint8* tokens_of_stage = token_slots(s);\",\"-\",\"-\",\"0\",\"0\",\"0\",\"1792\"\n",
    );

    #[test]
    fn books_sass_lines_to_their_cuda_lines() {
        let page = parse_source_page(CUDA_SASS_SAMPLE, 10).unwrap();
        assert_eq!(page.cuda.len(), 2, "lines without samples are left out");
        assert_eq!(page.cuda[0].line, 448);
        assert_eq!(page.cuda[0].samples, 353.0);
        assert!(page.cuda[0]
            .source
            .starts_with("barrier_wait(token_barriers"));
        assert_eq!(
            page.cuda[1].source,
            "asm(\"{ .reg .f16 h; cvt.f32.f16 %0, h; }\" : \"=f\"(value));"
        );
        assert_eq!(page.cuda[1].samples, 2.0);
        assert_eq!(page.sass.len(), 2);
        assert_eq!(page.sass[0].source, "@!P0  BRA 0x7f46437ad000");
        assert_eq!(page.sass[0].cuda_line, Some(448));
        assert_eq!(page.sass[1].address, "0x7f46437abf90");
        assert_eq!(page.sass[1].cuda_line, Some(66));
        let rendered = render_source_page(&page);
        assert!(
            rendered.starts_with("CUDA lines of the generated source by stall samples (top 2):")
        );
        assert!(rendered.contains("line 448") && rendered.contains("99.4%"));
        assert!(rendered.contains("SASS lines by stall samples (top 2):"));
    }
}
