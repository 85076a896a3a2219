//! What one decode step is: Llama-3-8B's 224 q6_K matmuls (32 layers of q, k, v, o, gate, up, down), each with
//! weights of its own, and what they weigh and need on the device. Plain functions, tested on the host.

use crate::gpu::weights::{gguf_bytes, Layout};
use crate::measure::bench::LLAMA3_8B_LAYER;

/// Llama-3-8B's transformer layers.
pub const LLAMA3_8B_LAYERS: usize = 32;

/// The token counts `--decode-step` runs when `--tokens` is not given.
pub const DEFAULT_STEP_TOKENS: [usize; 1] = [1];

/// At most this many tokens a step (the decode step is about decode; a larger n is prefill, `bench --prefill`).
pub const MAX_STEP_TOKENS: usize = 256;

/// Device memory kept free beside the step's buffers (modules, graphs, the driver's own).
pub const MEMORY_MARGIN: usize = 512 << 20;

/// One matmul of the step: `layer`'s `name`, m rows of K.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepCall {
    pub layer: usize,
    pub name: &'static str,
    pub m: usize,
    pub k: usize,
}

/// The step's matmuls in the order a decode step calls them: layer by layer, q k v o gate up down.
pub fn step_calls(layers: usize) -> Vec<StepCall> {
    (0..layers)
        .flat_map(|layer| {
            LLAMA3_8B_LAYER
                .iter()
                .map(move |&(name, m, k)| StepCall { layer, name, m, k })
        })
        .collect()
}

/// The distinct `(m, K)` of the step with the names of the matmuls of that shape (`q, o`), in first-call order.
pub fn distinct_shapes(calls: &[StepCall]) -> Vec<(usize, usize, String)> {
    let mut out: Vec<(usize, usize, String)> = Vec::new();
    for c in calls {
        match out.iter_mut().find(|(m, k, _)| (*m, *k) == (c.m, c.k)) {
            Some((_, _, names)) => {
                if !names.split(", ").any(|n| n == c.name) {
                    names.push_str(", ");
                    names.push_str(c.name);
                }
            }
            None => out.push((c.m, c.k, c.name.to_string())),
        }
    }
    out
}

/// The bytes the step's weights take in `layout` (no planes).
pub fn layout_bytes(calls: &[StepCall], layout: Layout) -> usize {
    calls.iter().map(|c| layout.matrix_bytes(c.m, c.k)).sum()
}

/// The bytes the step's weights take in GGUF files.
pub fn step_gguf_bytes(calls: &[StepCall]) -> usize {
    calls.iter().map(|c| gguf_bytes(c.m, c.k)).sum()
}

/// Output floats of one step at `tokens` tokens (each call writes `tokens x m`).
pub fn output_floats(calls: &[StepCall], tokens: usize) -> usize {
    calls.iter().map(|c| tokens * c.m).sum()
}

/// What the step allocates on the device beyond the workspace: `weight_bytes` of registered weights, two
/// copies of every output (direct calls and graph replays, compared), one activation buffer per distinct K,
/// all at `max_tokens`.
pub fn device_need(calls: &[StepCall], weight_bytes: usize, max_tokens: usize) -> usize {
    let mut ks: Vec<usize> = calls.iter().map(|c| c.k).collect();
    ks.sort_unstable();
    ks.dedup();
    let activations: usize = ks.iter().map(|k| max_tokens * k * 4).sum();
    weight_bytes + 2 * output_floats(calls, max_tokens) * 4 + activations
}

/// The `--tokens` list from `1,8,32`: whole numbers from 1 to [`MAX_STEP_TOKENS`], each once, in the order
/// given; a sentence when one is not.
pub fn parse_tokens(text: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let n: usize = part.parse().map_err(|_| {
            format!("'{part}' is not a token count: write whole numbers separated by commas, e.g. 1,8,32")
        })?;
        if n == 0 || n > MAX_STEP_TOKENS {
            return Err(format!(
                "{n} tokens: a decode step takes 1 to {MAX_STEP_TOKENS} tokens"
            ));
        }
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

/// `6.11 GB`: bytes in decimal gigabytes, as the copy rate's TB/s count them.
pub fn gb(bytes: usize) -> String {
    format!("{:.2} GB", bytes as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_224_calls_of_four_shapes() {
        let calls = step_calls(LLAMA3_8B_LAYERS);
        assert_eq!(calls.len(), 224);
        assert_eq!(
            calls[..7].iter().map(|c| c.name).collect::<Vec<_>>(),
            ["q", "k", "v", "o", "gate", "up", "down"]
        );
        assert_eq!(
            calls[223],
            StepCall {
                layer: 31,
                name: "down",
                m: 4096,
                k: 14336
            }
        );
        assert_eq!(
            distinct_shapes(&calls),
            vec![
                (4096, 4096, "q, o".to_string()),
                (1024, 4096, "k, v".to_string()),
                (14336, 4096, "gate, up".to_string()),
                (4096, 14336, "down".to_string()),
            ]
        );
    }

    #[test]
    fn the_step_reads_5_73_gb_raw_and_6_11_gb_padded() {
        let calls = step_calls(LLAMA3_8B_LAYERS);
        // Weights a layer: 2 x 4096 x 4096 + 2 x 1024 x 4096 + 3 x 14336 x 4096 = 218,103,808.
        let weights = 32 * 218_103_808usize;
        assert_eq!(layout_bytes(&calls, Layout::Raw), weights / 256 * 210);
        assert_eq!(layout_bytes(&calls, Layout::Padded), weights / 256 * 224);
        assert_eq!(step_gguf_bytes(&calls), layout_bytes(&calls, Layout::Raw));
        assert_eq!(gb(layout_bytes(&calls, Layout::Raw)), "5.73 GB");
        assert_eq!(gb(layout_bytes(&calls, Layout::Padded)), "6.11 GB");
        // Outputs: 43,008 rows a layer.
        assert_eq!(output_floats(&calls, 8), 8 * 32 * 43_008);
        let w = layout_bytes(&calls, Layout::Padded);
        assert_eq!(
            device_need(&calls, w, 32),
            w + 2 * 32 * 32 * 43_008 * 4 + 32 * (4096 + 14336) * 4
        );
    }

    #[test]
    fn token_lists_parse_with_sentences() {
        assert_eq!(parse_tokens("1"), Ok(vec![1]));
        assert_eq!(parse_tokens("1,8, 32,8"), Ok(vec![1, 8, 32]));
        let e = parse_tokens("1,x").unwrap_err();
        assert_eq!(
            e,
            "'x' is not a token count: write whole numbers separated by commas, e.g. 1,8,32"
        );
        assert!(parse_tokens("0").unwrap_err().contains("1 to 256"));
        assert!(parse_tokens("257").unwrap_err().contains("1 to 256"));
        assert!(parse_tokens("").is_err());
    }
}
