//! Selection by config: first match wins, `explain` says why, `check` finds gaps and dead rules, bad configs
//! are refused with one sentence, and the embedded default covers every token count on every architecture.

use mmqgen::catalogue;
use mmqgen::codegen::canonical_name;
use mmqgen::select::{
    Bounds, Config, ConfigError, Finding, Policy, RuleProblem, Verdict, BATCH_INVARIANT_CONFIG,
    CHECK_MAX_TOKENS, DEFAULT_CONFIG,
};
use mmqgen::{Arch, Layout, VariantDescription};

fn parse(text: &str) -> Config {
    Config::parse(text, &catalogue::all()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn refused(text: &str) -> String {
    match Config::parse(text, &catalogue::all()) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            let s = e.to_string();
            assert!(!s.contains('\n'), "not one sentence: {s}");
            s
        }
    }
}

/// The declared name of the variant `config` picks on sm_90.
fn chosen(config: &Config, layout: Layout, m: u64, n: u64, k: u64) -> String {
    config
        .select(Arch::Sm90, layout, m, n, k)
        .unwrap_or_else(|e| panic!("{e}"))
        .variant
        .name
        .to_string()
}

const THREE: &str = r#"
[[rule]]
name = "decode"
arch = "sm_90"
tokens = [1, 128]
variant = "small_n_f32"

[[rule]]
name = "big-k"
arch = "sm_90"
tokens = { min = 64 }
k = 14336
variant = "fold_per256"

[[rule]]
arch = "sm_90"
tokens = { min = 100 }
variant = "fold_per32"
"#;

#[test]
fn first_match_wins() {
    let config = parse(THREE);
    // n = 100, k = 14336: all three match; the first wins.
    let s = config
        .select(Arch::Sm90, Layout::Padded, 4096, 100, 14336)
        .unwrap();
    assert_eq!(
        (s.rule_index, s.rule_name, s.variant.name.as_ref()),
        (0, "decode", "small_n_f32")
    );
    // n = 512, k = 14336: rules 2 and 3 match; rule 2 wins.
    let s = config
        .select(Arch::Sm90, Layout::Padded, 4096, 512, 14336)
        .unwrap();
    assert_eq!((s.rule_index, s.variant.name.as_ref()), (1, "fold_per256"));
    // n = 512, k = 4096: only rule 3; unnamed rules are called "rule N".
    let s = config
        .select(Arch::Sm90, Layout::Padded, 4096, 512, 4096)
        .unwrap();
    assert_eq!(
        (s.rule_index, s.rule_name, s.variant.name.as_ref()),
        (2, "rule 3", "fold_per32")
    );
}

#[test]
fn explain_gives_every_rules_reason() {
    let config = parse(THREE);
    let e = config.explain(Arch::Sm90, Layout::Padded, 4096, 512, 14336);
    assert_eq!(e.chosen, Some(1));
    let fold256 = catalogue::find(&catalogue::all(), "fold_per256")
        .unwrap()
        .clone();
    assert_eq!(
        e.variant,
        Some(("fold_per256".to_string(), canonical_name(&fold256)))
    );
    assert_eq!(
        e.rules[0].verdict,
        Verdict::Rejected {
            reasons: vec!["tokens 1..=128 does not contain n = 512".to_string()]
        }
    );
    assert_eq!(
        e.rules[1].verdict,
        Verdict::Chosen {
            because: "arch sm_90, tokens 64.. contains n = 512, m any, k 14336 contains k = 14336"
                .to_string()
        }
    );
    assert!(matches!(
        e.rules[2].verdict,
        Verdict::Shadowed { winner: 1, .. }
    ));
    let text = e.to_string();
    for line in [
        "sm_90, padded weights, m = 4096, n = 512, k = 14336: variant fold_per256 (q6k_",
        "chosen by rule 2 'big-k': the first rule that matches (first match wins)",
        "rule 1 'decode' [sm_90, n 1..=128 -> small_n_f32]: no: tokens 1..=128 does not contain n = 512",
        "rule 3 [sm_90, n 100.. -> fold_per32]: matches too (arch sm_90, tokens 100.. contains n = 512, m any, k any), but rule 2 'big-k' comes first (first match wins)",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }

    // Several reasons at once, and no winner.
    let e = config.explain(Arch::Sm80, Layout::Padded, 4096, 512, 4096);
    assert_eq!(e.chosen, None);
    assert_eq!(
        e.rules[1].verdict,
        Verdict::Rejected {
            reasons: vec![
                "arch is sm_90, not sm_80".to_string(),
                "k 14336 does not contain k = 4096".to_string()
            ]
        }
    );
    assert!(e
        .to_string()
        .starts_with("sm_80, padded weights, m = 4096, n = 512, k = 4096: no rule matches\n"));
}

#[test]
fn no_match_names_the_shape_and_the_rules() {
    let err = parse(THREE)
        .select(Arch::Sm80, Layout::Padded, 4096, 512, 4096)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "no rule matches sm_80 with padded weights, m = 4096, n = 512, k = 4096; the rules are: \
         rule 1 'decode' (sm_90, n 1..=128 -> small_n_f32), rule 2 'big-k' (sm_90, n 64.., k 14336 -> fold_per256), \
         rule 3 (sm_90, n 100.. -> fold_per32)"
    );
    let empty = parse("");
    assert_eq!(
        empty
            .select(Arch::Sm90, Layout::Padded, 1, 1, 256)
            .unwrap_err()
            .to_string(),
        "no rule matches sm_90 with padded weights, m = 1, n = 1, k = 256; the config has no rules"
    );
    assert_eq!(empty.check(), [Finding::NoRules]);
}

fn check(config: &Config) -> Vec<Finding> {
    config.check()
}

fn problems(config: &Config) -> Vec<Finding> {
    check(config)
        .into_iter()
        .filter(Finding::is_problem)
        .collect()
}

#[test]
fn a_config_is_checked_for_the_architectures_it_names() {
    // Rules for sm_90 alone: no gap there, and every other architecture mmqgen targets is named as served by none,
    // which is a note, not a problem (a config for one GPU is a config).
    let config =
        parse("[[rule]]\narch = \"sm_90\"\ntokens = { min = 1 }\nvariant = \"fold_per32\"\n");
    let findings = config.check();
    assert!(!findings.iter().any(Finding::is_problem), "{findings:?}");
    let unnamed: Vec<Finding> = Arch::ALL
        .into_iter()
        .filter(|a| *a != Arch::Sm90)
        .map(|arch| Finding::NoRulesFor { arch })
        .collect();
    let notes: Vec<Finding> = findings
        .into_iter()
        .filter(|f| matches!(f, Finding::NoRulesFor { .. }))
        .collect();
    assert_eq!(notes, unnamed);
    assert_eq!(
        Finding::NoRulesFor { arch: Arch::Sm89 }.to_string(),
        "note: no rule names sm_89, so a GPU of that architecture gets no variant from this config"
    );
    // The embedded default names every architecture.
    let catalogue = mmqgen::catalogue::all();
    let default = Config::embedded(&catalogue).unwrap();
    assert!(!default
        .check()
        .iter()
        .any(|f| matches!(f, Finding::NoRulesFor { .. })));
}

#[test]
fn gaps_are_found() {
    let config = parse(
        r#"
[[rule]]
arch = "sm_90"
tokens = [1, 16]
variant = "small_n_f32"
[[rule]]
arch = "sm_90"
tokens = [17, 64]
k = 4096
variant = "splitk2_per32"
[[rule]]
arch = "sm_90"
tokens = [33, 1000]
variant = "fold_per32"
[[rule]]
arch = "sm_80"
tokens = 1
variant = "prefolded_per32"
[[rule]]
arch = "sm_80"
tokens = { min = 3 }
variant = "prefolded_per32"
"#,
    );
    assert_eq!(
        problems(&config),
        [
            Finding::Gap {
                arch: Arch::Sm80,
                layout: None,
                from: 2,
                to: 2,
                partly_limited: false
            },
            Finding::Gap {
                arch: Arch::Sm90,
                layout: None,
                from: 17,
                to: 32,
                partly_limited: true
            },
            Finding::Gap {
                arch: Arch::Sm90,
                layout: None,
                from: 1001,
                to: CHECK_MAX_TOKENS,
                partly_limited: false
            },
        ]
    );
    let shown: Vec<String> = problems(&config).iter().map(ToString::to_string).collect();
    assert_eq!(
        shown[0],
        "gap: no sm_80 rule covers n = 2 for every m and k"
    );
    assert_eq!(
        shown[1],
        "gap: no sm_90 rule covers n = 17..=32 for every m and k (rules limited to some m or k cover part of it, \
         which is not enough)"
    );
    assert_eq!(
        shown[2],
        "gap: no sm_90 rule covers n = 1001..=65536 for every m and k"
    );
}

#[test]
fn dead_rules_are_found_even_when_several_earlier_rules_share_the_work() {
    let config = parse(
        r#"
[[rule]]
name = "small-m"
arch = "sm_90"
tokens = { min = 1 }
m = [1, 4095]
variant = "fold_per32"
[[rule]]
name = "big-m"
arch = "sm_90"
tokens = [1, 1000]
m = { min = 4096 }
variant = "fold_per32"
[[rule]]
name = "dead"
arch = "sm_90"
tokens = [10, 1000]
variant = "fold_per256"
[[rule]]
name = "alive"
arch = "sm_90"
tokens = [10, 1001]
variant = "fold_per256"
[[rule]]
name = "other-arch"
arch = "sm_80"
tokens = { min = 1 }
variant = "prefolded_per32"
"#,
    );
    let findings = check(&config);
    let dead: Vec<&Finding> = findings
        .iter()
        .filter(|f| matches!(f, Finding::DeadRule { .. }))
        .collect();
    assert_eq!(dead.len(), 1, "{findings:#?}");
    assert_eq!(
        dead[0].to_string(),
        "dead rule: rule 3 'dead' never matches: rule 1 'small-m' and rule 2 'big-m' take every shape it covers \
         (first match wins)"
    );
    // "alive" keeps n = 1001 with m >= 4096: it overlaps both earlier rules, informationally.
    let overlaps: Vec<String> = findings
        .iter()
        .filter(|f| matches!(f, Finding::Overlap { rule: 3, .. }))
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        overlaps,
        [
            "overlap (informational): rule 4 'alive' and rule 1 'small-m' both cover sm_90, n 10..=1001, \
             m 1..=4095, k any; rule 1 'small-m' wins there",
            "overlap (informational): rule 4 'alive' and rule 2 'big-m' both cover sm_90, n 10..=1000, m 4096.., \
             k any; rule 2 'big-m' wins there",
        ]
    );
    assert!(findings
        .iter()
        .filter(|f| matches!(f, Finding::Overlap { .. }))
        .all(|f| !f.is_problem()));
    // Rules limited in m count for gaps when together they take every m (issue 55): n = 1..=9 is small-m's
    // below m = 4096 and big-m's from it, so no gap; from n = 1002 only small-m is left, so m >= 4096 is one.
    let gaps: Vec<&Finding> = findings
        .iter()
        .filter(|f| {
            matches!(
                f,
                Finding::Gap {
                    arch: Arch::Sm90,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(
        gaps,
        [&Finding::Gap {
            arch: Arch::Sm90,
            layout: None,
            from: 1002,
            to: CHECK_MAX_TOKENS,
            partly_limited: true
        }]
    );
}

#[test]
fn a_duplicate_rule_is_dead_and_open_ends_are_handled() {
    let config = parse(
        r#"
[[rule]]
arch = "sm_90"
tokens = { min = 1 }
variant = "fold_per32"
[[rule]]
arch = "sm_90"
tokens = { min = 1 }
k = { min = 256 }
variant = "fold_per32"
"#,
    );
    assert_eq!(
        problems(&config),
        [Finding::DeadRule {
            rule: 1,
            label: "rule 2".to_string(),
            by: vec!["rule 1".to_string()]
        }]
    );
}

#[test]
fn rules_that_admit_no_valid_shape_never_match() {
    let config = parse(
        r#"
[[rule]]
arch = "sm_90"
tokens = { min = 1 }
k = 100
variant = "fold_per32"
[[rule]]
arch = "sm_90"
tokens = { min = 1 }
variant = "fold_per32"
[[rule]]
arch = "sm_90"
tokens = { min = 3000000000 }
variant = "fold_per32"
"#,
    );
    let shown: Vec<String> = problems(&config)
        .iter()
        .filter(|f| !matches!(f, Finding::Gap { .. }))
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        shown,
        [
            "dead rule: rule 1 never matches a valid shape: k 100 holds no multiple of 256, and K is always one \
             (q6_K super-blocks)",
            "dead rule: rule 3 never matches a valid shape: tokens 3000000000.. lies above 2147483647, the \
             largest n a matmul accepts",
        ]
    );
}

#[test]
fn the_embedded_default_is_complete_and_valid() {
    assert!(
        DEFAULT_CONFIG.starts_with('#'),
        "the default config starts with how it was chosen"
    );
    assert!(
        DEFAULT_CONFIG.contains("Provenance:"),
        "the default config records where its choices were measured"
    );
    let all = catalogue::all();
    let config = Config::embedded(&all).unwrap();
    let problems: Vec<Finding> = config
        .check()
        .into_iter()
        .filter(Finding::is_problem)
        .collect();
    assert_eq!(problems, [], "{:#?}", config.check());
    for arch in Arch::ALL {
        assert!(
            config.rules.iter().any(|r| r.arch == arch),
            "no rule for {arch}"
        );
        for n in [
            1,
            2,
            15,
            16,
            17,
            100,
            128,
            129,
            512,
            4096,
            65535,
            65536,
            1 << 20,
        ] {
            let s = config
                .select(arch, Layout::Padded, 4096, n, 14336)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(s.variant.archs.contains(arch));
        }
    }
    for rule in &config.rules {
        let v = catalogue::find(&all, &rule.variant_name).unwrap_or_else(|| {
            panic!(
                "{}: {} is not in the catalogue",
                rule.label(),
                rule.variant_name
            )
        });
        assert!(v.archs.contains(rule.arch), "{}", rule.label());
        assert!(rule.named, "default rules carry names");
    }
    // Which variant wins a shape is measured (runtime/mmqgen.toml, docs/PERF.md); what every pick keeps is the
    // policy's (runtime/policy.toml): its engines, its footprint and accuracy caps, where each mode runs.
    let policy = Policy::embedded();
    assert_eq!(
        policy.check(&config),
        [],
        "the embedded config leaves its policy"
    );
    // Every shape of a grid on every architecture and layout gets a pick the policy allows at that token count, one
    // of the catalogue's default picks.
    let picks: Vec<String> = catalogue::DEFAULT_PICKS
        .iter()
        .map(canonical_name)
        .collect();
    for arch in Arch::ALL {
        for layout in Layout::ALL {
            for (m, k) in [
                (4096, 4096),
                (14336, 4096),
                (4096, 14336),
                (8192, 2816),
                (100, 256),
            ] {
                for n in [
                    1, 2, 8, 9, 16, 33, 64, 80, 81, 96, 97, 128, 129, 385, 512, 2048, 65536,
                ] {
                    let s = config
                        .select(arch, layout, m, n, k)
                        .unwrap_or_else(|e| panic!("{e}"));
                    let v = s.variant;
                    assert!(v.archs.contains(arch), "{arch} {m}x{n}x{k}: {}", v.name);
                    assert!(picks.contains(&canonical_name(v)), "{}", v.name);
                    assert!(policy.engines.contains(&v.engine), "{}", v.name);
                    for range in &policy.modes {
                        if range.mode == v.mode
                            && range.arch.is_none_or(|a| a == arch)
                            && range.layout.is_none_or(|l| l == layout)
                        {
                            assert!(
                                range.tokens.contains(n),
                                "{arch} {layout} {m}x{n}x{k}: mode {} outside n {}",
                                v.mode,
                                range.tokens
                            );
                        }
                    }
                }
            }
        }
    }
    // Two numerics modes on sm_90, both within docs/DESIGN.md D13's cap, so a token's bits depend on which side of the
    // boundary its batch falls (README, "Bits"); `config check` says so.
    assert!(config
        .check()
        .iter()
        .any(|f| matches!(f, Finding::ModeMix { .. })));
}

/// The policy refuses what the default must not pick, each in one sentence naming the rule.
/// The batch-invariant selection (runtime/batch_invariant.toml): no gaps or dead rules, every ring within the K its
/// shared memory fits, and one mode, int12_per256, for every token count, shape and layout on sm_90.
#[test]
fn the_batch_invariant_config_has_one_mode_at_every_n() {
    assert!(BATCH_INVARIANT_CONFIG.starts_with('#'));
    let all = catalogue::all();
    let config = Config::batch_invariant(&all).unwrap();
    let findings = config.check();
    let problems: Vec<&Finding> = findings.iter().filter(|f| f.is_problem()).collect();
    assert_eq!(problems, Vec::<&Finding>::new(), "{findings:#?}");
    assert!(
        !findings.iter().any(|f| matches!(
            f,
            Finding::ModeMix {
                arch: Arch::Sm90,
                ..
            }
        )),
        "{findings:#?}"
    );
    for rule in &config.rules {
        assert_eq!(rule.arch, Arch::Sm90, "{}", rule.label());
        assert_eq!(
            rule.variant.mode,
            mmqgen::codegen::NumericsMode::Int12Per256,
            "{}",
            rule.label()
        );
        assert!(rule.variant.archs.contains(Arch::Sm90), "{}", rule.label());
        assert!(rule.named, "{}", rule.label());
    }
    for layout in [Layout::Raw, Layout::Padded] {
        for (m, k) in [
            (4096, 4096),
            (14336, 4096),
            (4096, 14336),
            (1024, 4096),
            (4096, 65536),
        ] {
            for n in [
                1, 2, 3, 4, 5, 8, 9, 16, 37, 64, 81, 96, 128, 129, 200, 384, 500, 512, 2048, 65536,
            ] {
                let s = config
                    .select(Arch::Sm90, layout, m, n, k)
                    .unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(s.variant.mode, mmqgen::codegen::NumericsMode::Int12Per256);
            }
        }
    }
    // The rings take the decode shapes (the warpgroup tiles past them).
    assert_eq!(
        chosen(&config, Layout::Padded, 4096, 1, 4096),
        "ring_i12_t1_fused"
    );
    assert_eq!(
        chosen(&config, Layout::Padded, 4096, 4, 14336),
        "wgmma_i12_128x64_producer"
    );
    assert_eq!(
        chosen(&config, Layout::Raw, 14336, 2, 4096),
        "ring_i12_t2_tall_fused"
    );
}

#[test]
fn a_config_outside_its_policy_is_told_why() {
    let policy = Policy::embedded();
    let config = parse(
        r#"
[[rule]]
name = "planes"
arch = "sm_90"
tokens = { min = 1 }
variant = "prefolded_spread"

[[rule]]
name = "per256"
arch = "sm_80"
tokens = { min = 1 }
variant = "fold_per256"

[[rule]]
name = "late-per32"
arch = "sm_90"
layout = "padded"
tokens = { min = 1 }
variant = "tma_64x64_b2"
"#,
    );
    let sentences: Vec<String> = policy
        .check(&config)
        .iter()
        .map(ToString::to_string)
        .collect();
    let said = |rule: &str, words: &str| {
        assert!(
            sentences
                .iter()
                .any(|s| s.starts_with(rule) && s.contains(words)),
            "{rule}, {words}: {sentences:#?}"
        )
    };
    said(
        "rule 1 'planes'",
        "engine mma_k32_prefolded, which the policy does not allow",
    );
    said("rule 1 'planes'", "bytes on the device for 4096 x 4096");
    said("rule 2 'per256'", "mode int_per256, which adds NMSE");
    said(
        "rule 2 'per256'",
        "engine mma_k32_fold, which the policy does not allow",
    );
    said(
        "rule 3 'late-per32'",
        "picks mode int_per32 for n any, where the policy allows it only for n 1..=128",
    );
    assert!(sentences.iter().all(|s| !s.contains('\n')));
    // A policy that allows them has nothing to say.
    let lenient = Policy::parse(
        "footprint = 4.0\nactivation_nmse = 1.0\nengines = [\"mma_k32_prefolded\", \"mma_k32_fold\", \"mma_k32_regfold\"]\n",
    )
    .unwrap();
    assert_eq!(lenient.check(&config), []);
}

#[test]
fn a_bad_policy_gets_its_sentence() {
    for (text, words) in [
        ("footprint = 1.1", "`engines` must be a list of engines"),
        ("footprint = -1\nactivation_nmse = 1.0\nengines = []", "`footprint` must be a positive number"),
        ("activation_nmse = 1.0\nengines = []", "`footprint` is missing"),
        ("footprint = 1.1\nactivation_nmse = 1.0\nengines = [\"dp5a\"]", "`engines` must be one of dp4a,"),
        ("footprint = 1.1\nactivation_nmse = 1.0\nengines = []\ncap = 3", "`cap` is not a policy key"),
        (
            "footprint = 1.1\nactivation_nmse = 1.0\nengines = []\n[[mode]]\nmode = \"int_per32\"\nlayout = \"dense\"\ntokens = 1",
            "`mode.layout` must be raw or padded",
        ),
        (
            "footprint = 1.1\nactivation_nmse = 1.0\nengines = []\n[[mode]]\nmode = \"int_per32\"",
            "`mode.tokens` is missing",
        ),
        ("footprint = [", "not valid TOML"),
    ] {
        let e = Policy::parse(text).unwrap_err().to_string();
        assert!(e.contains(words), "{text}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

/// A config whose first rule sends `tokens` tokens with K up to `k_max` to `variant`, the rest to regfold_64x64
/// (sm_90) and splitk2_per32 (sm_80).
fn ring_rule_config(tokens: u32, k_max: u64, variant: &str) -> Config {
    parse(&format!(
        r#"
[[rule]]
name = "tall"
arch = "sm_90"
tokens = {tokens}
k = {{ max = {k_max} }}
variant = "{variant}"

[[rule]]
name = "rest"
arch = "sm_90"
tokens = {{ min = 1 }}
variant = "regfold_64x64"

[[rule]]
name = "ampere"
arch = "sm_80"
tokens = {{ min = 1 }}
variant = "splitk2_per32"
"#
    ))
}

#[test]
fn a_ring_rule_past_the_k_its_shared_memory_fits_is_a_problem() {
    // ring_t1_tall's records and sums fit one sm_90 block up to K = 23552.
    let found = problems(&ring_rule_config(1, 24576, "ring_t1_tall"));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        found[0].to_string(),
        "error: rule 1 'tall' picks 'ring_t1_tall' for K up to 24576, but its shared memory grows with K and fits \
         one sm_90 block only up to K = 23552: give the rule k = { max = 23552 } (or less) and a later rule for \
         longer K"
    );
}

#[test]
fn a_ring_rule_bounded_below_its_k_by_a_non_multiple_of_256_is_fine() {
    // ring_t4_tall fits up to K = 7936; K comes in multiples of 256, so k <= 8191 admits nothing beyond.
    assert_eq!(problems(&ring_rule_config(4, 8191, "ring_t4_tall")), []);
}

const OWN_VARIANT: &str = r#"
[[variant]]
name = "mine"
engine = "mma_k16"
mode = "int_per32"
nbj = 64
tile_n = 64
archs = ["sm_90"]

[[rule]]
name = "mine-everywhere"
arch = "sm_90"
tokens = { min = 1 }
variant = "mine"
"#;

#[test]
fn a_config_can_declare_and_select_its_own_variant() {
    let config = parse(OWN_VARIANT);
    assert_eq!(config.variants.len(), 1);
    let s = config
        .select(Arch::Sm90, Layout::Padded, 64, 7, 256)
        .unwrap();
    assert_eq!(s.variant.name, "mine");
    assert_eq!(s.variant, &config.variants[0]);
    // By its canonical name too.
    let canonical = canonical_name(&config.variants[0]);
    let by_canonical =
        parse(&OWN_VARIANT.replace("variant = \"mine\"", &format!("variant = \"{canonical}\"")));
    assert_eq!(
        by_canonical
            .select(Arch::Sm90, Layout::Padded, 64, 7, 256)
            .unwrap()
            .variant
            .name,
        "mine"
    );
}

#[test]
fn variants_from_extra_lists_are_known() {
    let mut all = catalogue::all();
    let mut extra: VariantDescription = catalogue::PREFOLDED_PER32;
    extra.name = "extra_fold".into();
    all.push(extra);
    let text = "[[rule]]\narch = \"sm_80\"\ntokens = [1, 8]\nvariant = \"extra_fold\"\n";
    assert!(Config::parse(text, &catalogue::all()).is_err());
    let config = Config::parse(text, &all).unwrap();
    assert_eq!(
        config.rules[0].tokens,
        Bounds {
            min: 1,
            max: Some(8)
        }
    );
}

fn rule(body: &str) -> String {
    format!("[[rule]]\nname = \"r\"\n{body}\n")
}

#[test]
fn bad_configs_get_their_sentences() {
    let base = "arch = \"sm_90\"\ntokens = [1, 16]\n";
    let cases: Vec<(String, &str)> = vec![
        (
            rule(&format!("{base}variant = \"nope\"")),
            "rule 1 'r': no variant named 'nope': known variants are dp4a_f32_per16, r41, r42, r56, dp4a_int_per32,",
        ),
        (
            rule("arch = \"sm_90\"\ntokens = [16, 1]\nvariant = \"r56\""),
            "rule 1 'r': `tokens` is empty: its lower bound 16 is above its upper bound 1",
        ),
        (
            rule("arch = \"sm_90\"\ntokens = [0, 16]\nvariant = \"r56\""),
            "rule 1 'r': `tokens` bounds must be at least 1; got 0",
        ),
        (
            rule("arch = \"sm_90\"\ntokens = [1, 2, 3]\nvariant = \"r56\""),
            "rule 1 'r': `tokens` must be an integer, an inclusive [min, max] or a table { min = .., max = .. }; got an \
             array of 3 items (use { min = .. } for an open end)",
        ),
        (
            rule("arch = \"sm_90\"\ntokens = { min = 1, maximum = 4 }\nvariant = \"r56\""),
            "rule 1 'r': `tokens` has an unknown key `maximum`; a range table takes min and max",
        ),
        (
            rule(&format!("{base}m = \"4096\"\nvariant = \"r56\"")),
            "rule 1 'r': `m` must be an integer, an inclusive [min, max] or a table { min = .., max = .. }; got a string",
        ),
        (
            rule(&format!("{base}k = [256, 1.5]\nvariant = \"r56\"")),
            "rule 1 'r': `k` bounds must be integers; got a float",
        ),
        (
            rule(&format!("{base}tokns = 3\nvariant = \"r56\"")),
            "rule 1 'r': unknown key `tokns`; a rule takes name, arch, layout, tokens, m, k, k_multiple, variant",
        ),
        (
            // NVRTC 13.0 compiles for sm_88, but mmqgen's architecture table does not list it.
            rule("arch = \"sm_88\"\ntokens = 1\nvariant = \"r56\""),
            "rule 1 'r': arch 'sm_88' is not one mmqgen targets: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, \
             sm_103, sm_120, sm_121",
        ),
        (
            rule("arch = 90\ntokens = 1\nvariant = \"r56\""),
            "rule 1 'r': `arch` must be a string such as \"sm_90\"; got an integer",
        ),
        (
            rule("arch = \"sm_90\"\nvariant = \"r56\""),
            "rule 1 'r': `tokens` is missing; every rule gives its token counts n, such as tokens = [1, 16] or \
             tokens = { min = 129 }",
        ),
        (
            rule(base),
            "rule 1 'r': `variant` is missing; every rule names the variant it selects",
        ),
        (
            format!("{}{}", rule(&format!("{base}variant = \"r56\"")), rule(&format!("{base}variant = \"r41\""))),
            "rule 2 'r': the name 'r' is already used by rule 1; rule names must be unique",
        ),
        (
            "rules = []".to_string(),
            "unknown top-level key `rules`: a config holds [[rule]] and [[variant]] tables",
        ),
        ("rule = 3".to_string(), "`rule` must be an array of tables (`[[rule]]`), one per rule"),
        ("[[rule]\n".to_string(), "the config is not valid TOML: "),
        (
            OWN_VARIANT.replace("arch = \"sm_90\"\ntokens", "arch = \"sm_80\"\ntokens"),
            "rule 1 'mine-everywhere': variant 'mine' is not built for sm_80 (its archs are [sm_90]); pick a variant \
             that lists sm_80",
        ),
        (
            OWN_VARIANT.replace("nbj = 64", "nbj = 64\nkdr = 3"),
            "variant #1 (mine): field `kdr`: kdr must divide 8",
        ),
        (
            OWN_VARIANT.replace("name = \"mine\"", "name = \"r56\""),
            "the config's variant 'r56' is already taken (by q6k_mma_k16_f32_per16_64x64_w2x2_kdr2_ks1_plane_uint4_cpa16_cpp16_s2_totreg); \
             pick another name",
        ),
    ];
    for (text, expected) in cases {
        let got = refused(&text);
        assert!(
            got.starts_with(expected),
            "got:      {got}\nexpected: {expected}...\n--- config:\n{text}"
        );
    }
    assert!(refused("x = 1\n[[rule]\n").ends_with("(line 2)"));
    // Typed, too.
    match Config::parse(
        &rule("arch = \"sm_90\"\ntokens = 1\nvariant = \"x\""),
        &catalogue::all(),
    ) {
        Err(ConfigError::Rule {
            problem: RuleProblem::UnknownVariant { known, .. },
            ..
        }) => {
            // The sentence names the first 40 variants, then how many more.
            let all = catalogue::all().len();
            if all <= 40 {
                assert_eq!(known.len(), all);
            } else {
                assert_eq!(known.len(), 41);
                assert_eq!(known[40], format!("and {} more", all - 40));
            }
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn ranges_take_three_forms() {
    let config = parse(
        r#"
[[rule]]
arch = "sm_90"
tokens = 7
m = [1, 4096]
k = { max = 4096 }
variant = "r56"
[[rule]]
arch = "sm_90"
tokens = { min = 8, max = 9 }
variant = "r56"
"#,
    );
    let r = &config.rules;
    assert_eq!(
        r[0].tokens,
        Bounds {
            min: 7,
            max: Some(7)
        }
    );
    assert_eq!(
        r[0].m,
        Bounds {
            min: 1,
            max: Some(4096)
        }
    );
    assert_eq!(
        r[0].k,
        Bounds {
            min: 1,
            max: Some(4096)
        }
    );
    assert_eq!(
        r[1].tokens,
        Bounds {
            min: 8,
            max: Some(9)
        }
    );
    assert_eq!(r[1].m, Bounds::ANY);
    assert_eq!(r[0].summary(), "sm_90, n 7, m 1..=4096, k 1..=4096 -> r56");
}

/// A rule may name the weight layout it is for: the pick then depends on how the matrix was registered.
const BY_LAYOUT: &str = r#"
[[rule]]
name = "ring-padded"
arch = "sm_90"
layout = "padded"
tokens = 1
k = { max = 23552 }
variant = "ring_t1"

[[rule]]
name = "stream"
arch = "sm_90"
tokens = 1
variant = "stream_t1"

[[rule]]
name = "rest"
arch = "sm_90"
tokens = { min = 2 }
variant = "regfold_64x64"

[[rule]]
arch = "sm_80"
tokens = { min = 1 }
variant = "splitk2_per32"
"#;

#[test]
fn a_rule_may_be_for_one_layout() {
    let config = parse(BY_LAYOUT);
    let pick = |layout| chosen(&config, layout, 4096, 1, 4096);
    assert_eq!(pick(Layout::Padded), "ring_t1");
    assert_eq!(pick(Layout::Raw), "stream_t1");
    // Registration builds planes for the variants that can serve its layout only.
    let names = |layout| -> Vec<String> {
        config
            .variants_for(Arch::Sm90, layout, 4096, 4096)
            .iter()
            .map(|v| v.name.to_string())
            .collect()
    };
    assert_eq!(names(Layout::Raw), ["stream_t1", "regfold_64x64"]);
    assert_eq!(
        names(Layout::Padded),
        ["ring_t1", "stream_t1", "regfold_64x64"]
    );
    let e = config.explain(Arch::Sm90, Layout::Raw, 4096, 1, 4096);
    assert_eq!(e.chosen, Some(1));
    assert_eq!(
        e.to_string().lines().nth(2).unwrap(),
        "  rule 1 'ring-padded' [sm_90, padded layout, n 1, k 1..=23552 -> ring_t1]: no: it is for the padded \
         layout, not raw"
    );
    // Not dead: it is the only rule of its shapes on the padded layout, and the raw layout has no gap.
    let findings = check(&config);
    assert!(findings.iter().all(|f| !f.is_problem()), "{findings:#?}");
}

#[test]
fn layout_gaps_and_dead_rules_are_per_layout() {
    // Without "stream", raw weights have no n = 1 rule; a second padded-only rule under the first is dead.
    let text = BY_LAYOUT.replace(
        "name = \"stream\"\narch = \"sm_90\"\n",
        "name = \"stream\"\narch = \"sm_90\"\nlayout = \"padded\"\n",
    );
    let findings = check(&parse(&text));
    assert!(
        findings.contains(&Finding::Gap {
            arch: Arch::Sm90,
            layout: Some(Layout::Raw),
            from: 1,
            to: 1,
            partly_limited: false,
        }),
        "{findings:#?}"
    );
    assert_eq!(
        findings
            .iter()
            .find(|f| matches!(f, Finding::Gap { .. }))
            .unwrap()
            .to_string(),
        "gap: no sm_90 rule covers n = 1 for every m and k in the raw layout"
    );
    let dead = BY_LAYOUT.replace("k = { max = 23552 }\n", "") + DEAD_PADDED;
    let findings = check(&parse(&dead));
    let dead: Vec<String> = findings
        .iter()
        .filter(|f| matches!(f, Finding::DeadRule { .. }))
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        dead,
        ["dead rule: rule 5 'late-padded' never matches: rule 1 'ring-padded' and rule 2 'stream' take every \
          shape it covers (first match wins)"]
    );
}

const DEAD_PADDED: &str = r#"
[[rule]]
name = "late-padded"
arch = "sm_90"
layout = "padded"
tokens = 1
variant = "stream_t2"
"#;

#[test]
fn an_unknown_layout_is_refused() {
    let text = BY_LAYOUT.replace("layout = \"padded\"", "layout = \"tiled\"");
    assert_eq!(
        refused(&text),
        "rule 1 'ring-padded': layout 'tiled' is not a weight layout: it is raw or padded (or leave it out for \
         both)"
    );
}

/// Raw blocks at an address the copy engine cannot reach (a view that starts 2 bytes into a buffer) get the rules
/// written for 16-bit reads, not a variant that would fall back to copying them 16 bits at a time; at an aligned
/// address the selection is `select`'s.
#[test]
fn raw_blocks_the_copy_engine_cannot_reach_skip_the_tensor_copy_picks() {
    use mmqgen::codegen::launch::raw_rows_weights;
    let all = catalogue::all();
    let config = Config::embedded(&all).unwrap();
    let pick = |address: u64, m: u64, n: u64, k: u64| {
        config
            .select_raw_at(Arch::Sm90, address, m, n, k)
            .unwrap()
            .variant
            .name
            .to_string()
    };
    for (m, n, k, unaligned_pick) in [
        (4096, 1, 4096, "stream_t1"),
        (4096, 2, 4096, "stream_t2"),
        (14336, 8, 4096, "stream_t4"),
        (4096, 512, 4096, "llamacpp"),
        (14336, 4096, 4096, "llamacpp"),
    ] {
        let aligned = config
            .select(Arch::Sm90, Layout::Raw, m, n, k)
            .unwrap()
            .variant
            .name
            .to_string();
        assert_eq!(pick(0x7f00_0000_0100, m, n, k), aligned, "{m}x{n}x{k}");
        let unaligned = pick(0x7f00_0000_0102, m, n, k);
        assert_eq!(unaligned, unaligned_pick, "{m}x{n}x{k}");
        let desc = all.iter().find(|d| d.name == unaligned).unwrap();
        assert!(
            raw_rows_weights(desc).is_none(),
            "{unaligned} reads raw blocks by tensor copies"
        );
    }
    // The shapes the API test runs on a view two bytes into a buffer (runtime/tests/api_default_rules.rs).
    for (m, k) in [(333, 2816), (4097, 4352), (1000, 11008), (256, 4096)] {
        for n in [1, 2, 3, 4, 8, 16, 33, 64, 129] {
            let name = pick(0x7f00_0000_0102, m, n, k);
            let desc = all.iter().find(|d| d.name == name).unwrap();
            assert!(raw_rows_weights(desc).is_none(), "{m}x{n}x{k}: {name}");
        }
    }
}
