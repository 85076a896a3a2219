//! Host-side work (input generation, references, registration, compilation) spread over the CPU cores.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads for host-side work (input generation, references, registration, compilation).
pub(super) fn worker_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 16)
}

/// `f` over `items` on [`worker_threads`] threads, results in item order.
pub(super) fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = worker_threads().min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let f = &f;
    let mut parts: Vec<Vec<(usize, R)>> = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= items.len() {
                            break;
                        }
                        out.push((i, f(&items[i])));
                    }
                    out
                })
            })
            .collect();
        for h in handles {
            parts.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
    });
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (i, r) in parts.into_iter().flatten() {
        slots[i] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.expect("every item was mapped"))
        .collect()
}

/// Row ranges of about `rows / threads` rows, for splitting host work.
pub(super) fn row_chunks(rows: usize) -> Vec<(usize, usize)> {
    let per = rows.div_ceil(worker_threads() * 4).max(1);
    (0..rows)
        .step_by(per)
        .map(|r| (r, (r + per).min(rows)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_map_keeps_order() {
        let items: Vec<usize> = (0..1000).collect();
        assert_eq!(
            parallel_map(&items, |&i| i * 2),
            (0..1000).map(|i| i * 2).collect::<Vec<_>>()
        );
        assert_eq!(
            parallel_map(&Vec::<usize>::new(), |&i| i),
            Vec::<usize>::new()
        );
        let chunks = row_chunks(14336);
        assert_eq!(chunks.first().unwrap().0, 0);
        assert_eq!(chunks.last().unwrap().1, 14336);
        assert!(chunks.windows(2).all(|w| w[0].1 == w[1].0));
    }
}
