//! The timed rounds of one shape: every contestant (a variant's whole call, its quantizer alone, a cuBLAS
//! baseline, a read-floor geometry) called in turn, A B C A B C, each on its next buffer set, under the spin
//! kernel and the two events of [`super::timer::Timer`].

use super::cublas::{DenseDevice, GemmArgs};
use super::driver::{RunCtx, VariantBuffers};
use super::fail::Fail;
use super::floor::{FloorBuffers, FLOOR_GEOMETRIES};
use super::report::Outcome;
use super::stats::Stats;
use crate::check::Shape;
use std::time::Instant;

/// The contestants of a shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Contestant {
    /// A variant's whole call.
    Total(usize),
    /// A variant's activation quantizer alone.
    Quantizer(usize),
    /// A cuBLAS baseline.
    Cublas(usize),
    /// The read floor at one of [`FLOOR_GEOMETRIES`].
    Floor(usize),
}

/// One contestant's timed calls, summarised.
pub(super) struct Timing {
    pub(super) outcome: Outcome,
    pub(super) launch_bound: usize,
}

/// Runs the contestants interleaved, A B C A B C, the starting one rotating each round: `warmup` rounds
/// untimed, then `repeats` timed. A contestant whose call fails drops out with the reason; a fault that
/// leaves the context unusable ends the shape.
#[allow(clippy::too_many_arguments)]
pub(super) fn time_interleaved(
    rc: &RunCtx,
    shape: Shape,
    sets: usize,
    contestants: &[Contestant],
    bufs: &mut VariantBuffers,
    dense: &mut [DenseDevice],
    mut floor: Option<&mut FloorBuffers>,
    label: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Timing>, Fail> {
    let Shape { m, n, k } = shape;
    let stream = &rc.stream;
    let cfg = rc.cfg;
    let gemm_args = GemmArgs::for_linear(m, n, k).map_err(Fail::Local)?;
    let count = contestants.len();
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(cfg.repeats); count];
    let mut failed: Vec<Option<String>> = vec![None; count];
    let mut launch_bound = vec![0usize; count];
    let rounds = cfg.warmup + cfg.repeats;
    // Each contestant walks through all its sets in turn (starting at a different one from its neighbours), so
    // its own previous calls are always more than 3 L2s of traffic ago, whatever the others do.
    let mut calls = vec![0usize; count];
    let t = Instant::now();
    let mut last_note = Instant::now();
    for round in 0..rounds {
        for j in 0..count {
            let c = (j + round) % count;
            if failed[c].is_some() {
                continue;
            }
            let s = (calls[c] + c) % sets;
            calls[c] += 1;
            let timed = match contestants[c] {
                Contestant::Total(i) => {
                    let ws = bufs.workspaces[i]
                        .as_mut()
                        .expect("passing variants have a workspace");
                    let (b, w, x, out) = (
                        &rc.built[i],
                        &bufs.weights[i][s],
                        &bufs.xs[s],
                        &mut bufs.outs[s],
                    );
                    rc.timer.time(stream, &rc.spinner, || {
                        b.variant
                            .matmul(w, x, out, n, stream, ws)
                            .map_err(Fail::launch)
                    })
                }
                Contestant::Quantizer(i) => {
                    let ws = bufs.workspaces[i]
                        .as_mut()
                        .expect("passing variants have a workspace");
                    let (b, x) = (&rc.built[i], &bufs.xs[s]);
                    rc.timer.time(stream, &rc.spinner, || {
                        b.variant
                            .quantize_activations(x, n, k, stream, ws)
                            .map_err(Fail::launch)
                    })
                }
                Contestant::Cublas(j) => {
                    let cublas = rc
                        .cublas
                        .as_ref()
                        .expect("baselines exist only with cuBLAS");
                    let d = &mut dense[j];
                    let (w, x, out) = (&d.w[s], &d.x[s], &mut d.out[s]);
                    let kind = d.dense;
                    rc.timer.time(stream, &rc.spinner, || {
                        cublas.gemm(stream, kind, gemm_args, w, x, out)
                    })
                }
                Contestant::Floor(g) => {
                    let reader = rc
                        .reader
                        .as_ref()
                        .expect("floor contestants need the reader");
                    let f = floor
                        .as_deref_mut()
                        .expect("floor contestants have the floor's buffers");
                    let (bytes, out) = (&f.sets[s], &mut f.out);
                    rc.timer.time(stream, &rc.spinner, || {
                        reader.launch(stream, FLOOR_GEOMETRIES[g], bytes, out)
                    })
                }
            };
            match timed {
                Ok((us, enqueue_us)) => {
                    if round >= cfg.warmup {
                        samples[c].push(us);
                        if enqueue_us > rc.spinner.us {
                            launch_bound[c] += 1;
                        }
                    }
                }
                Err(Fail::Fatal(e)) => {
                    let who = contestant_name(rc, dense, contestants[c]);
                    return Err(Fail::Fatal(format!("{who} while being timed: {e}")));
                }
                Err(Fail::Local(e)) => failed[c] = Some(format!("a timed call failed: {e}")),
            }
        }
        if last_note.elapsed().as_secs_f64() > 10.0 {
            last_note = Instant::now();
            progress(&format!(
                "{label}: timing round {}/{rounds} ({count} contestants, {:.0} s)",
                round + 1,
                t.elapsed().as_secs_f64()
            ));
        }
    }
    Ok((0..count)
        .map(|c| Timing {
            outcome: match (&failed[c], Stats::from_samples(&samples[c])) {
                (Some(e), _) => Outcome::NotTimed(e.clone()),
                (None, Some(st)) => Outcome::Timed(st),
                (None, None) => Outcome::NotTimed("no timed call".into()),
            },
            launch_bound: launch_bound[c],
        })
        .collect())
}

fn contestant_name(rc: &RunCtx, dense: &[DenseDevice], c: Contestant) -> String {
    match c {
        Contestant::Total(i) => format!("variant '{}'", rc.built[i].desc.name),
        Contestant::Quantizer(i) => format!("the quantizer of variant '{}'", rc.built[i].desc.name),
        Contestant::Cublas(j) => dense[j].dense.name().to_string(),
        Contestant::Floor(g) => format!("the read floor at {}", FLOOR_GEOMETRIES[g]),
    }
}
