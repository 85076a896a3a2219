//! `mmqgen config check`: gaps, rules no valid shape reaches, dead rules, overlaps and numerics-mode mixes.

use super::*;
use crate::codegen::{ring_max_k, Engine};

/// What `config check` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The config has no rules at all.
    NoRules,
    /// No rule without an m or K limit covers `from..=to` tokens on `arch` (for weights in `layout`; `None`:
    /// in either layout).
    Gap {
        arch: Arch,
        layout: Option<Layout>,
        from: u64,
        to: u64,
        /// Some rule limited to certain m or K covers part of the gap.
        partly_limited: bool,
    },
    /// Earlier rules take every shape this rule covers: it never matches.
    DeadRule {
        rule: usize,
        label: String,
        by: Vec<String>,
    },
    /// A rule that admits no valid shape (K is a multiple of 256; m, n and K are at most [`MAX_SHAPE_DIM`]).
    NeverMatches {
        rule: usize,
        label: String,
        /// Why, e.g. `k 100 holds no multiple of 256, ...`.
        why: String,
    },
    /// Informational: so many m- or K-limited earlier rules overlap this rule that the exact dead-rule test
    /// was not run for it; it is counted as live.
    Unchecked { rule: usize, label: String },
    /// A rule picks a variant whose shared memory grows with K (engine `stream_ring`) for K beyond what fits
    /// one block on its architecture: those calls would be refused.
    KTooLong {
        rule: usize,
        label: String,
        variant: String,
        arch: Arch,
        /// The rule's largest K (None: any).
        k_max: Option<u64>,
        /// The largest K the variant takes on `arch`.
        fits: u64,
    },
    /// Informational: no rule names `arch`, so a GPU of that architecture gets no variant from this config (the
    /// embedded default names every architecture mmqgen knows).
    NoRulesFor { arch: Arch },
    /// Informational: overlaps beyond the first `listed` are not listed.
    OverlapsCut { listed: usize },
    /// Informational: two live rules share shapes; the earlier wins there.
    Overlap {
        rule: usize,
        label: String,
        earlier: String,
        arch: Arch,
        /// The one layout both rules are for; `None`: both layouts.
        layout: Option<Layout>,
        shared: [Bounds; 3],
    },
    /// Informational: one architecture picks variants of different numerics modes, so the bits of a matmul
    /// depend on the shape (docs/DESIGN.md D3: bits follow the mode).
    ModeMix {
        arch: Arch,
        modes: Vec<(NumericsMode, Vec<String>)>,
    },
}

impl Finding {
    /// Gaps, dead rules and an empty config fail `config check`; the rest is informational.
    pub fn is_problem(&self) -> bool {
        matches!(
            self,
            Finding::NoRules
                | Finding::Gap { .. }
                | Finding::DeadRule { .. }
                | Finding::NeverMatches { .. }
                | Finding::KTooLong { .. }
        )
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::NoRules => f.write_str("error: the config has no rules, so no shape can be served"),
            Finding::NoRulesFor { arch } => write!(
                f,
                "note: no rule names {arch}, so a GPU of that architecture gets no variant from this config"
            ),
            Finding::Gap {
                arch,
                layout,
                from,
                to,
                partly_limited,
            } => {
                let range = if from == to {
                    format!("n = {from}")
                } else {
                    format!("n = {from}..={to}")
                };
                write!(
                    f,
                    "gap: no {arch} rule covers {range} for every m and k"
                )?;
                if let Some(layout) = layout {
                    write!(f, " in the {layout} layout")?;
                }
                if *partly_limited {
                    f.write_str(" (rules limited to some m or k cover part of it, which is not enough)")?;
                }
                Ok(())
            }
            Finding::DeadRule { label, by, .. } => write!(
                f,
                "dead rule: {label} never matches: {} {} every shape it covers (first match wins)",
                join_and(by),
                if by.len() == 1 { "takes" } else { "take" }
            ),
            Finding::NeverMatches { label, why, .. } => {
                write!(f, "dead rule: {label} never matches a valid shape: {why}")
            }
            Finding::KTooLong {
                label,
                variant,
                arch,
                k_max,
                fits,
                ..
            } => write!(
                f,
                "error: {label} picks '{variant}' for K {}, but its shared memory grows with K and fits one {arch} \
                 block only up to K = {fits}: give the rule k = {{ max = {fits} }} (or less) and a later rule for \
                 longer K",
                k_max.map_or("of any size".to_string(), |k| format!("up to {k}")),
            ),
            Finding::Unchecked { label, .. } => write!(
                f,
                "unchecked (informational): {label} overlaps more m- or K-limited earlier rules than the exact \
                 dead-rule test takes; it is counted as live"
            ),
            Finding::OverlapsCut { listed } => write!(
                f,
                "overlaps (informational): only the first {listed} overlaps are listed"
            ),
            Finding::Overlap {
                label,
                earlier,
                arch,
                layout,
                shared,
                ..
            } => write!(
                f,
                "overlap (informational): {label} and {earlier} both cover {arch}, {}n {}, m {}, k {}; {earlier} wins \
                 there",
                layout.map_or(String::new(), |l| format!("{l} layout, ")),
                shared[0],
                shared[1],
                shared[2]
            ),
            Finding::ModeMix { arch, modes } => {
                let parts: Vec<String> = modes
                    .iter()
                    .map(|(mode, rules)| format!("{mode} by {}", join_and(rules)))
                    .collect();
                write!(
                    f,
                    "numerics (informational): {arch} picks variants of different numerics modes ({}), so the same \
                     inputs give different bits at different shapes",
                    parts.join("; ")
                )
            }
        }
    }
}

impl Config {
    /// Gaps (for every architecture mmqgen targets, not only those the config names), rules that can never
    /// match a valid shape, dead rules, overlaps and numerics-mode mixes, in that order.
    ///
    /// The work grows about linearly with the rule count: covered token ranges are kept merged, earlier rules
    /// are found through an index by token range, and the exact test for a rule that only a mix of m- or
    /// K-limited rules could cover is bounded ([`Finding::Unchecked`] says when a rule exceeded it).
    pub fn check(&self) -> Vec<Finding> {
        if self.rules.is_empty() {
            return vec![Finding::NoRules];
        }
        let boxes: Vec<Result<Box3, String>> = self.rules.iter().map(Box3::of).collect();
        let mut findings = Vec::new();
        for arch in Arch::ALL {
            if !self.rules.iter().any(|r| r.arch == arch) {
                findings.push(Finding::NoRulesFor { arch });
                continue;
            }
            // Reported once when both layouts have the same gaps (always so without `layout` keys).
            let [raw, padded] = Layout::ALL.map(|layout| self.gaps(arch, layout, &boxes));
            let per_layout: Vec<(Option<Layout>, &Vec<GapRange>)> = if raw == padded {
                vec![(None, &raw)]
            } else {
                vec![(Some(Layout::Raw), &raw), (Some(Layout::Padded), &padded)]
            };
            for (layout, gaps) in per_layout {
                findings.extend(gaps.iter().map(|g| Finding::Gap {
                    arch,
                    layout,
                    from: g.from,
                    to: g.to,
                    partly_limited: g.partly_limited,
                }));
            }
        }
        for rule in &self.rules {
            if rule.variant.engine != Engine::StreamRing {
                continue;
            }
            let fits = ring_max_k(&rule.variant, rule.arch.max_shared_bytes_per_block());
            // K comes in multiples of 256: `k = { max = 8191 }` admits no K above 7936.
            let largest_k = rule.k.hi() / 256 * 256;
            if largest_k > fits {
                findings.push(Finding::KTooLong {
                    rule: rule.index,
                    label: rule.label(),
                    variant: rule.variant_name.clone(),
                    arch: rule.arch,
                    k_max: rule.k.max,
                    fits,
                });
            }
        }
        for (rule, b) in self.rules.iter().zip(&boxes) {
            if let Err(why) = b {
                findings.push(Finding::NeverMatches {
                    rule: rule.index,
                    label: rule.label(),
                    why: why.clone(),
                });
            }
        }
        // Rules are weighed per architecture and layout: a rule without a `layout` key is in both.
        let mut per_arch: HashMap<(Arch, Layout), ArchRules> = HashMap::new();
        let mut cells_left = CELL_BUDGET;
        let mut live = vec![false; self.rules.len()];
        let mut overlaps = Vec::new();
        let mut overlaps_cut = false;
        for (rule, b) in self.rules.iter().zip(&boxes) {
            let Ok(b) = b else { continue };
            let layouts: Vec<Layout> = Layout::ALL
                .into_iter()
                .filter(|l| rule.takes_layout(*l))
                .collect();
            // Dead when earlier rules cover it in every layout it is for; live when open in one.
            let mut verdicts = Vec::with_capacity(layouts.len());
            for layout in &layouts {
                let arch = per_arch.entry((rule.arch, *layout)).or_default();
                verdicts.push(arch.verdict(b, &mut cells_left));
            }
            if verdicts.iter().all(|v| matches!(v, Coverage::Covered)) {
                let mut by: Vec<String> = Vec::new();
                for layout in &layouts {
                    for label in
                        per_arch[&(rule.arch, *layout)].some_earlier(b, |i| self.rules[i].label())
                    {
                        if !by.contains(&label) {
                            by.push(label);
                        }
                    }
                }
                findings.push(Finding::DeadRule {
                    rule: rule.index,
                    label: rule.label(),
                    by,
                });
            } else if verdicts.iter().any(|v| matches!(v, Coverage::Open)) {
                live[rule.index] = true;
            } else {
                findings.push(Finding::Unchecked {
                    rule: rule.index,
                    label: rule.label(),
                });
                live[rule.index] = true;
            }
            if live[rule.index] && !overlaps_cut {
                let mut earlier: Vec<usize> = Vec::new();
                for layout in &layouts {
                    let (found, complete) =
                        per_arch[&(rule.arch, *layout)].earlier_overlapping(b, OVERLAP_WALK);
                    earlier.extend(found);
                    overlaps_cut |= !complete;
                }
                earlier.retain(|&i| live[i]);
                earlier.sort_unstable();
                earlier.dedup();
                for i in earlier {
                    if overlaps.len() == MAX_OVERLAPS {
                        overlaps_cut = true;
                        break;
                    }
                    let e = &self.rules[i];
                    if let Some(shared) = intersect(&rule.dims(), &e.dims()) {
                        overlaps.push(Finding::Overlap {
                            rule: rule.index,
                            label: rule.label(),
                            earlier: e.label(),
                            arch: rule.arch,
                            layout: rule.layout.or(e.layout),
                            shared,
                        });
                    }
                }
            }
            // A rule for some K of its range only (k_multiple) covers no box whole: it hides no later rule and
            // fills no gap.
            if rule.k_multiple.is_some() {
                continue;
            }
            for layout in &layouts {
                per_arch
                    .get_mut(&(rule.arch, *layout))
                    .expect("entered above")
                    .insert(rule.index, b);
            }
        }
        findings.extend(overlaps);
        if overlaps_cut {
            findings.push(Finding::OverlapsCut {
                listed: MAX_OVERLAPS,
            });
        }
        for arch in Arch::ALL {
            let mut modes: Vec<(NumericsMode, Vec<String>, usize)> = Vec::new();
            for rule in self
                .rules
                .iter()
                .filter(|r| r.arch == arch && live[r.index])
            {
                match modes
                    .iter_mut()
                    .find(|(mode, _, _)| *mode == rule.variant.mode)
                {
                    Some((_, labels, count)) => {
                        *count += 1;
                        if labels.len() < NAMES_LISTED {
                            labels.push(rule.label());
                        }
                    }
                    None => modes.push((rule.variant.mode, vec![rule.label()], 1)),
                }
            }
            if modes.len() > 1 {
                let modes = modes
                    .into_iter()
                    .map(|(mode, mut labels, count)| {
                        if count > labels.len() {
                            labels.push(format!("{} more rules", count - labels.len()));
                        }
                        (mode, labels)
                    })
                    .collect();
                findings.push(Finding::ModeMix { arch, modes });
            }
        }
        findings
    }

    /// Token ranges in `1..=CHECK_MAX_TOKENS` that no rule of `arch` for `layout` covering every valid m and K
    /// serves.
    pub(super) fn gaps(
        &self,
        arch: Arch,
        layout: Layout,
        boxes: &[Result<Box3, String>],
    ) -> Vec<GapRange> {
        let of_arch = || {
            self.rules
                .iter()
                .zip(boxes)
                .filter(move |(r, _)| {
                    r.arch == arch && r.takes_layout(layout) && r.k_multiple.is_none()
                })
                .filter_map(|(_, b)| b.as_ref().ok())
        };
        let mut covered: Vec<(u64, u64)> = of_arch()
            .filter(|b| b.is_full())
            .map(|b| (b.lo[0], b.hi[0]))
            .collect();
        covered.sort_unstable();
        // Every rule's token range, sorted, with the running maximum of their ends: does any rule touch a gap?
        let mut any: Vec<(u64, u64)> = of_arch().map(|b| (b.lo[0], b.hi[0])).collect();
        any.sort_unstable();
        let mut reach = Vec::with_capacity(any.len());
        let mut max_hi = 0;
        for &(_, hi) in &any {
            max_hi = max_hi.max(hi);
            reach.push(max_hi);
        }
        let touched = |from: u64, to: u64| {
            let p = any.partition_point(|&(lo, _)| lo <= to);
            p > 0 && reach[p - 1] >= from
        };
        let mut gaps = Vec::new();
        let mut next = 1u64; // the smallest n not yet known to be covered
        for (lo, hi) in covered {
            if next > CHECK_MAX_TOKENS {
                break;
            }
            if lo > next {
                gaps.push((next, (lo - 1).min(CHECK_MAX_TOKENS)));
            }
            next = next.max(hi.saturating_add(1));
        }
        if next <= CHECK_MAX_TOKENS {
            gaps.push((next, CHECK_MAX_TOKENS));
        }
        // Rules limited to some m or K may still cover a gap together (one for m below 8192, one from 8192):
        // what they leave open for some (m, K) is the gap.
        let mut limited: Vec<Box3> = of_arch().filter(|b| !b.is_full()).copied().collect();
        limited.sort_unstable_by_key(|b| b.lo[0]);
        let mut limited_reach = Vec::with_capacity(limited.len());
        let mut max_hi = 0;
        for b in &limited {
            max_hi = max_hi.max(b.hi[0]);
            limited_reach.push(max_hi);
        }
        let mut cells_left = GAP_CELL_BUDGET;
        let mut out: Vec<GapRange> = Vec::new();
        for (from, to) in gaps
            .into_iter()
            .filter(|(from, _)| *from <= CHECK_MAX_TOKENS)
        {
            if !touched(from, to) {
                out.push(GapRange {
                    from,
                    to,
                    partly_limited: false,
                });
                continue;
            }
            out.extend(open_parts(
                from,
                to,
                &limited,
                &limited_reach,
                &mut cells_left,
            ));
        }
        out
    }
}

/// Cells the gap test may visit over one architecture and layout (each cell against at most
/// [`EXACT_RULES`] rules).
pub(super) const GAP_CELL_BUDGET: u64 = 2_000_000;

/// The parts of the token range `from..=to`, which no unlimited rule covers, that the limited rules (`limited`,
/// sorted by their lowest n, with the running maximum of their highest n in `reach`) leave open for some m and
/// K. The range is cut at every limited rule's token edges, and each piece's (m, K) plane at every edge of the
/// rules that span the piece; each cell is inside or outside each rule as a whole, so one corner per cell
/// decides it. Past the bounds ([`EXACT_RULES`] rules, [`OVERLAP_WALK`] steps, `cells_left`) a piece is kept
/// as a gap: a gap is only ever left out when it is proven covered.
fn open_parts(
    from: u64,
    to: u64,
    limited: &[Box3],
    reach: &[u64],
    cells_left: &mut u64,
) -> Vec<GapRange> {
    let whole = vec![GapRange {
        from,
        to,
        partly_limited: true,
    }];
    let mut boxes: Vec<&Box3> = Vec::new();
    let below = limited.partition_point(|b| b.lo[0] <= to);
    for (steps, i) in (0..below).rev().enumerate() {
        if reach[i] < from {
            break;
        }
        if steps == OVERLAP_WALK || boxes.len() > EXACT_RULES {
            return whole;
        }
        if limited[i].hi[0] >= from {
            boxes.push(&limited[i]);
        }
    }
    // Token edges inside the range: each piece between two is spanned whole by the rules that touch it.
    let mut cuts: Vec<u64> = vec![from, to + 1];
    for b in &boxes {
        for cut in [b.lo[0], b.hi[0].saturating_add(1)] {
            if cut > from && cut <= to {
                cuts.push(cut);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut parts: Vec<GapRange> = Vec::new();
    for piece in cuts.windows(2) {
        let (lo, hi) = (piece[0], piece[1] - 1);
        let spanning: Vec<&Box3> = boxes
            .iter()
            .filter(|b| b.lo[0] <= lo && b.hi[0] >= hi)
            .copied()
            .collect();
        if plane_covered(&spanning, cells_left) {
            continue;
        }
        match parts.last_mut() {
            Some(last) if last.to + 1 == lo => last.to = hi,
            _ => parts.push(GapRange {
                from: lo,
                to: hi,
                partly_limited: true,
            }),
        }
    }
    parts
}

/// Whether `boxes` together cover every valid (m, K); `false` too when the test would pass `cells_left`.
fn plane_covered(boxes: &[&Box3], cells_left: &mut u64) -> bool {
    if boxes.is_empty() {
        return false;
    }
    let edges: Vec<Vec<u128>> = (1..3)
        .map(|d| {
            let (lo, end) = (Box3::DOMAIN.lo[d] as u128, Box3::DOMAIN.hi[d] as u128 + 1);
            let mut cuts = vec![lo, end];
            for b in boxes {
                for cut in [b.lo[d] as u128, b.hi[d] as u128 + 1] {
                    if cut > lo && cut < end {
                        cuts.push(cut);
                    }
                }
            }
            cuts.sort_unstable();
            cuts.dedup();
            cuts
        })
        .collect();
    let cells = (edges[0].len() as u64 - 1) * (edges[1].len() as u64 - 1);
    if cells > *cells_left {
        return false;
    }
    *cells_left -= cells;
    edges[0][..edges[0].len() - 1].iter().all(|&m| {
        edges[1][..edges[1].len() - 1].iter().all(|&k| {
            boxes.iter().any(|b| {
                m >= b.lo[1] as u128
                    && m <= b.hi[1] as u128
                    && k >= b.lo[2] as u128
                    && k <= b.hi[2] as u128
            })
        })
    })
}

/// Token counts `from..=to` that no unlimited rule covers ([`Finding::Gap`] without its architecture and layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct GapRange {
    from: u64,
    to: u64,
    partly_limited: bool,
}

/// The largest m, n or K that [`crate::gpu::launch::check_shape`] accepts on its own (it also bounds products);
/// `config check` treats a rule that admits no shape within these as one that can never match.
pub const MAX_SHAPE_DIM: u64 = i32::MAX as u64;
/// K comes in super-blocks of 256.
pub(super) const SUPER_BLOCK: u64 = 256;
/// How many overlaps `config check` lists.
pub(super) const MAX_OVERLAPS: usize = 200;
/// How many earlier rules a search for overlaps visits per rule.
pub(super) const OVERLAP_WALK: usize = 4096;
/// How many earlier rules the exact dead-rule test takes for one rule.
pub(super) const EXACT_RULES: usize = 64;
/// Cells the exact dead-rule tests may visit over the whole check.
pub(super) const CELL_BUDGET: u64 = 50_000_000;

/// A rule's shapes within what [`crate::gpu::launch::check_shape`] accepts: inclusive `[lo, hi]` of n, m and K in
/// super-blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Box3 {
    lo: [u64; 3],
    hi: [u64; 3],
}

impl Box3 {
    const DOMAIN: Box3 = Box3 {
        lo: [1, 1, 1],
        hi: [MAX_SHAPE_DIM, MAX_SHAPE_DIM, MAX_SHAPE_DIM / SUPER_BLOCK],
    };

    /// The rule's box, or why it holds no valid shape.
    pub(super) fn of(rule: &Rule) -> Result<Box3, String> {
        let mut b = Box3::DOMAIN;
        for (d, (key, bounds)) in [("tokens", rule.tokens), ("m", rule.m), ("k", rule.k)]
            .into_iter()
            .enumerate()
        {
            let (mut lo, mut hi) = (bounds.min, bounds.hi());
            if d == 2 {
                if lo.div_ceil(SUPER_BLOCK) > hi / SUPER_BLOCK {
                    return Err(format!(
                        "k {bounds} holds no multiple of 256, and K is always one (q6_K super-blocks)"
                    ));
                }
                (lo, hi) = (lo.div_ceil(SUPER_BLOCK), hi / SUPER_BLOCK);
            }
            if lo > b.hi[d] {
                return Err(format!(
                    "{key} {bounds} lies above {MAX_SHAPE_DIM}, the largest {} a matmul accepts",
                    if d == 0 {
                        "n"
                    } else if d == 1 {
                        "m"
                    } else {
                        "K"
                    }
                ));
            }
            b.lo[d] = lo.max(b.lo[d]);
            b.hi[d] = hi.min(b.hi[d]);
        }
        Ok(b)
    }

    /// Whether m and K are unlimited (within valid shapes).
    pub(super) fn is_full(&self) -> bool {
        (1..3).all(|d| self.lo[d] == Box3::DOMAIN.lo[d] && self.hi[d] == Box3::DOMAIN.hi[d])
    }

    pub(super) fn overlaps(&self, other: &Box3) -> bool {
        (0..3).all(|d| self.lo[d] <= other.hi[d] && other.lo[d] <= self.hi[d])
    }
}

/// How earlier rules cover a rule's box.
pub(super) enum Coverage {
    Covered,
    Open,
    /// The exact test would take more than its bounds.
    Unknown,
}

/// The rules of one architecture seen so far, indexed for the dead-rule and overlap tests.
#[derive(Default)]
pub(super) struct ArchRules {
    /// Merged, disjoint token ranges of the rules without m or K limits: `lo -> hi`.
    full: BTreeMap<u64, u64>,
    /// Every rule by `(token lo, index)`, with its box.
    all: BTreeMap<(u64, usize), Box3>,
    /// The longest token range in `all`, to stop searches early.
    all_span: u64,
    /// The rules with m or K limits, the same way.
    partial: BTreeMap<(u64, usize), Box3>,
    partial_span: u64,
}

impl ArchRules {
    pub(super) fn insert(&mut self, index: usize, b: &Box3) {
        let span = b.hi[0] - b.lo[0];
        self.all.insert((b.lo[0], index), *b);
        self.all_span = self.all_span.max(span);
        if !b.is_full() {
            self.partial.insert((b.lo[0], index), *b);
            self.partial_span = self.partial_span.max(span);
            return;
        }
        // Merge [lo, hi] with the ranges it touches.
        let (mut lo, mut hi) = (b.lo[0], b.hi[0]);
        if let Some((&l, &h)) = self.full.range(..=lo).next_back() {
            if h.saturating_add(1) >= lo {
                lo = l;
                hi = hi.max(h);
            }
        }
        let touching: Vec<u64> = self
            .full
            .range(lo..=hi.saturating_add(1))
            .map(|(&l, _)| l)
            .collect();
        for l in touching {
            if let Some(h) = self.full.remove(&l) {
                hi = hi.max(h);
            }
        }
        self.full.insert(lo, hi);
    }

    /// Whether the full rules' merged ranges hold every n of `lo..=hi`.
    pub(super) fn full_covers(&self, lo: u64, hi: u64) -> bool {
        self.full
            .range(..=lo)
            .next_back()
            .is_some_and(|(_, &h)| h >= hi)
    }

    /// Earlier rules in `map` whose boxes meet `b`, visiting at most `walk` entries; and whether the search
    /// was complete.
    pub(super) fn search(
        map: &BTreeMap<(u64, usize), Box3>,
        span: u64,
        b: &Box3,
        walk: usize,
    ) -> (Vec<(usize, Box3)>, bool) {
        let mut found = Vec::new();
        for (steps, (&(lo, i), other)) in map.range(..=(b.hi[0], usize::MAX)).rev().enumerate() {
            if lo.saturating_add(span) < b.lo[0] {
                return (found, true);
            }
            if steps == walk {
                return (found, false);
            }
            if other.overlaps(b) {
                found.push((i, *other));
            }
        }
        (found, true)
    }

    pub(super) fn earlier_overlapping(&self, b: &Box3, walk: usize) -> (Vec<usize>, bool) {
        let (found, complete) = Self::search(&self.all, self.all_span, b, walk);
        (found.into_iter().map(|(i, _)| i).collect(), complete)
    }

    /// A few earlier rules that take part of `b`, for a sentence.
    pub(super) fn some_earlier(&self, b: &Box3, label: impl Fn(usize) -> String) -> Vec<String> {
        let (mut found, complete) = self.earlier_overlapping(b, NAMES_LISTED);
        found.sort_unstable();
        let mut by: Vec<String> = found.into_iter().map(label).collect();
        if !complete || by.is_empty() {
            by.push("other earlier rules".to_string());
        }
        by
    }

    /// Whether earlier rules take every shape of `b`. The full rules decide most cases through their merged
    /// ranges; otherwise the box is cut into cells at every overlapping earlier rule's edges (each cell is then
    /// inside or outside each earlier box as a whole, so testing one corner per cell is exact).
    pub(super) fn verdict(&self, b: &Box3, cells_left: &mut u64) -> Coverage {
        if self.full_covers(b.lo[0], b.hi[0]) {
            return Coverage::Covered;
        }
        let (partial, complete) = Self::search(&self.partial, self.partial_span, b, EXACT_RULES);
        if partial.is_empty() && complete {
            return Coverage::Open;
        }
        if !complete {
            return Coverage::Unknown;
        }
        let mut earlier: Vec<Box3> = partial.into_iter().map(|(_, e)| e).collect();
        for (&lo, &hi) in self.full.range(..=b.hi[0]).rev() {
            if hi < b.lo[0] {
                break;
            }
            if earlier.len() > 2 * EXACT_RULES {
                return Coverage::Unknown;
            }
            earlier.push(Box3 {
                lo: [lo, Box3::DOMAIN.lo[1], Box3::DOMAIN.lo[2]],
                hi: [hi, Box3::DOMAIN.hi[1], Box3::DOMAIN.hi[2]],
            });
        }
        let edges: Vec<Vec<u128>> = (0..3)
            .map(|d| {
                let (lo, end) = (b.lo[d] as u128, b.hi[d] as u128 + 1);
                let mut cuts = vec![lo, end];
                for e in &earlier {
                    for cut in [e.lo[d] as u128, e.hi[d] as u128 + 1] {
                        if cut > lo && cut < end {
                            cuts.push(cut);
                        }
                    }
                }
                cuts.sort_unstable();
                cuts.dedup();
                cuts
            })
            .collect();
        let cells: u64 = edges.iter().map(|e| e.len() as u64 - 1).product();
        if cells > *cells_left {
            return Coverage::Unknown;
        }
        *cells_left -= cells;
        let starts: Vec<&[u128]> = edges.iter().map(|e| &e[..e.len() - 1]).collect();
        for &n in starts[0] {
            for &m in starts[1] {
                for &k in starts[2] {
                    let inside = |e: &Box3| {
                        [n, m, k]
                            .iter()
                            .enumerate()
                            .all(|(d, &v)| v >= e.lo[d] as u128 && v <= e.hi[d] as u128)
                    };
                    if !earlier.iter().any(inside) {
                        return Coverage::Open;
                    }
                }
            }
        }
        Coverage::Covered
    }
}

pub(super) fn intersect(a: &[Bounds; 3], b: &[Bounds; 3]) -> Option<[Bounds; 3]> {
    Some([
        a[0].intersect(&b[0])?,
        a[1].intersect(&b[1])?,
        a[2].intersect(&b[2])?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        Config::parse(text, &crate::catalogue::all()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn gaps(config: &Config, arch: Arch) -> Vec<(u64, u64, bool)> {
        config
            .check()
            .into_iter()
            .filter_map(|f| match f {
                Finding::Gap {
                    arch: a,
                    from,
                    to,
                    partly_limited,
                    ..
                } if a == arch => Some((from, to, partly_limited)),
                _ => None,
            })
            .collect()
    }

    /// The rest of the config: every token count on every other architecture (with the variant built for all of
    /// them), so that only sm_90's gaps are in question.
    fn rest() -> String {
        Arch::ALL
            .iter()
            .filter(|a| **a != Arch::Sm90)
            .map(|a| {
                format!(
                    "[[rule]]\narch = \"{a}\"\ntokens = {{ min = 1 }}\nvariant = \"dp4a_int_per32\"\n"
                )
            })
            .collect()
    }

    fn rule(tokens: &str, limit: &str) -> String {
        format!("[[rule]]\narch = \"sm_90\"\ntokens = {tokens}\n{limit}\nvariant = \"r56\"\n")
    }

    /// Rules that split m (or K) between them and together take every shape leave no gap; a split that misses
    /// one m, or covers only some tokens, still leaves its gap, and so does an unlimited hole.
    #[test]
    fn rules_that_split_m_or_k_together_leave_no_gap() {
        let split_m = format!(
            "{}{}{}",
            rule("{ min = 1 }", "m = { max = 8191 }"),
            rule("{ min = 1 }", "m = { min = 8192 }"),
            rest()
        );
        assert_eq!(gaps(&config(&split_m), Arch::Sm90), []);
        assert!(!config(&split_m).check().iter().any(Finding::is_problem));

        // K split three ways over different token ranges, with an unlimited rule for the rest.
        let split_k = format!(
            "{}{}{}{}{}",
            rule("[1, 100]", "k = { max = 4096 }"),
            rule("[1, 200]", "k = [4097, 8192]"),
            rule("[1, 150]", "k = { min = 8193 }"),
            rule("{ min = 101 }", ""),
            rest()
        );
        assert_eq!(gaps(&config(&split_k), Arch::Sm90), []);

        // m = 8192 is taken by neither: n = 1..=64 is a gap (the rest is covered by an unlimited rule).
        let missing_m = format!(
            "{}{}{}{}",
            rule("{ min = 1 }", "m = { max = 8191 }"),
            rule("{ min = 1 }", "m = { min = 8193 }"),
            rule("{ min = 65 }", ""),
            rest()
        );
        assert_eq!(gaps(&config(&missing_m), Arch::Sm90), [(1, 64, true)]);

        // The second half of m only up to n = 32: n = 33..=64 is open, n = 1..=32 is not.
        let short = format!(
            "{}{}{}{}",
            rule("[1, 64]", "m = { max = 8191 }"),
            rule("[1, 32]", "m = { min = 8192 }"),
            rule("{ min = 65 }", ""),
            rest()
        );
        assert_eq!(gaps(&config(&short), Arch::Sm90), [(33, 64, true)]);
    }
}
