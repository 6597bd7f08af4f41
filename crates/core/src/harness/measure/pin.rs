//! Thread pinning: a rayon pool per thread count whose threads are each pinned (core_affinity)
//! to a distinct logical CPU as they start — before any barrier of a measurement — with the pin
//! map and every failure recorded rather than fatal.

use std::sync::{Arc, Mutex};

use thiserror::Error;

use crate::results::{PinnedThread, Pinning};

#[derive(Debug, Error)]
pub enum PinError {
    #[error("cannot start a pool of {threads} threads: {message}")]
    Pool { threads: usize, message: String },
}

/// The logical CPUs this process may run on (empty when the OS does not say).
pub fn available_cpus() -> Vec<usize> {
    core_affinity::get_core_ids()
        .map(|ids| ids.into_iter().map(|c| c.id).collect())
        .unwrap_or_default()
}

/// Number of CPUs to sweep thread counts over (at least 1).
pub fn cpu_count() -> usize {
    let n = available_cpus().len();
    if n == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        n
    }
}

/// A pool of `threads` workers, worker i pinned to the i-th available CPU.
pub struct PinnedPool {
    pool: rayon::ThreadPool,
    pinning: Pinning,
}

impl std::fmt::Debug for PinnedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedPool")
            .field("pinning", &self.pinning)
            .finish()
    }
}

impl PinnedPool {
    /// Starts the pool and waits until every worker has tried to pin itself.
    pub fn new(threads: usize) -> Result<Self, PinError> {
        let threads = threads.max(1);
        let cpus = available_cpus();
        let slots: Arc<Mutex<Vec<Option<PinnedThread>>>> =
            Arc::new(Mutex::new(vec![None; threads]));
        let slots_in_pool = Arc::clone(&slots);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("stridelab-measure-{i}"))
            .start_handler(move |index| {
                let cpu = (!cpus.is_empty()).then(|| cpus[index % cpus.len()]);
                let (pinned, error) = match cpu {
                    Some(id) => {
                        if index >= cpus.len() {
                            (
                                core_affinity::set_for_current(core_affinity::CoreId { id }),
                                Some(format!(
                                    "more threads than CPUs: thread {index} shares CPU {id}"
                                )),
                            )
                        } else if core_affinity::set_for_current(core_affinity::CoreId { id }) {
                            (true, None)
                        } else {
                            (false, Some(format!("sched_setaffinity to CPU {id} failed")))
                        }
                    }
                    None => (false, Some("the OS did not list the available CPUs".into())),
                };
                if let Ok(mut slots) = slots_in_pool.lock() {
                    slots[index] = Some(PinnedThread {
                        thread: index,
                        cpu,
                        pinned,
                        error,
                    });
                }
            })
            .build()
            .map_err(|e| PinError::Pool {
                threads,
                message: e.to_string(),
            })?;
        // Every worker runs its start handler before taking work, so after one broadcast all
        // slots are filled.
        pool.broadcast(|_| ());
        let pinning = Pinning {
            threads: slots
                .lock()
                .map(|s| {
                    s.iter()
                        .enumerate()
                        .map(|(i, p)| {
                            p.clone().unwrap_or(PinnedThread {
                                thread: i,
                                cpu: None,
                                pinned: false,
                                error: Some("worker did not report".into()),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
        };
        Ok(Self { pool, pinning })
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    pub fn pinning(&self) -> &Pinning {
        &self.pinning
    }

    /// Runs `f(thread_index)` exactly once on every worker, concurrently, and collects the
    /// results in thread order.
    pub fn broadcast<R: Send>(&self, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
        self.pool.broadcast(|ctx| f(ctx.index()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_worker_is_pinned_to_a_distinct_cpu_when_there_are_enough() {
        let n = cpu_count();
        let pool = PinnedPool::new(n).unwrap();
        let map = &pool.pinning().threads;
        assert_eq!(map.len(), n);
        let mut cpus: Vec<_> = map.iter().filter_map(|t| t.cpu).collect();
        cpus.sort();
        cpus.dedup();
        assert_eq!(cpus.len(), n, "{map:?}");
        assert!(map.iter().all(|t| t.pinned), "{map:?}");
        assert_eq!(pool.broadcast(|i| i), (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn oversubscription_is_recorded_not_fatal() {
        let n = cpu_count() + 1;
        let pool = PinnedPool::new(n).unwrap();
        assert!(pool.pinning().threads[n - 1].error.is_some());
    }
}
