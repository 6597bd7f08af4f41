//! The levels below the first on a thread of their own: the first level's misses reach them
//! in chunks over a bounded channel, so the first level takes the next accesses while the
//! lower levels take the last ones' misses. Exact: a level's state and counts depend only on
//! the accesses that reach it, in order (rule 5 of the simulator), and the channel keeps the
//! order. The thread runs from the first full chunk to the next flush, so a small simulation
//! never starts one.
//!
//! When the second level classifies misses (3C) and its first chunk is mostly moves' misses,
//! its shadow runs on a third thread (`sim/detached.rs`): each chunk, once the lower levels
//! have taken it, goes on to the shadow with the second level's logged hits, and from there
//! back to the first level for reuse. There the level's lookups are few (a side at a time)
//! and the shadow's many; elsewhere the split bought nothing and cost CPU time (`sim row-sum`
//! 1.18×, `sim matmul 192 ijk` 1.20×, `sim chase 8M` 1.13×), so the shadow stays.

use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use super::detached::{DetachedShadow, HitLog};
use super::level::LevelSim;
use super::stream::{Piece, Stream};

/// First-level misses per message to the lower levels: a message costs a channel hand-over
/// and, when the first level waits on a full channel, a wake-up of its thread from the lower
/// one (some 10 µs on these VMs); a chunk is about a millisecond of work. At 8192 the
/// wake-ups took 5% of the lower thread's samples on the naive transpose.
pub(super) const CHUNK: usize = 65536;
/// Chunks sent and not yet taken: how far the first level may run ahead.
const IN_FLIGHT: usize = 4;

/// Runs `batch` through `levels` one level at a time: the first takes the batch whole, and
/// each level's misses, in order, are the next level's batch. `buffers` are reused.
pub(super) fn run_levels(levels: &mut [LevelSim], batch: &Stream, buffers: &mut [Stream; 2]) {
    let Some((first, rest)) = levels.split_first_mut() else {
        return;
    };
    let [input, misses] = buffers;
    input.clear();
    take_stream(first, batch, (!rest.is_empty()).then_some(&mut *input));
    let count = rest.len();
    for (i, level) in rest.iter_mut().enumerate() {
        if input.is_empty() {
            break;
        }
        misses.clear();
        take_stream(level, input, (i + 1 < count).then_some(&mut *misses));
        std::mem::swap(input, misses);
    }
}

/// One level takes a stream in order: single accesses as a batch, runs whole.
fn take_stream(level: &mut LevelSim, stream: &Stream, mut misses: Option<&mut Stream>) {
    stream.for_each_piece(|piece| match piece {
        Piece::Accesses(accesses) => level.run_batch(accesses, misses.as_deref_mut()),
        Piece::Run(run) => level.take_run(run, misses.as_deref_mut()),
        Piece::Moves(moves) => level.take_moves_missed(moves, misses.as_deref_mut()),
    });
}

/// The lower levels, running on their own thread until [`Lower::finish`] hands them back.
#[derive(Debug)]
pub(super) struct Lower {
    chunks: SyncSender<Stream>,
    /// Emptied chunks coming back for reuse.
    emptied: Receiver<Stream>,
    worker: JoinHandle<Vec<LevelSim>>,
}

impl Lower {
    /// Starts the thread with `levels` (the first of them with its 3C shadow on a thread of
    /// its own if `detach_shadow`); gives them back if no thread can be started.
    pub(super) fn start(levels: Vec<LevelSim>, detach_shadow: bool) -> Result<Self, Vec<LevelSim>> {
        let (chunks, incoming) = sync_channel::<Stream>(IN_FLIGHT);
        let (give_back, emptied) = channel();
        // The levels follow the spawn, so a failed spawn leaves them here.
        let (hand_over, handed) = channel::<Vec<LevelSim>>();
        let spawned = std::thread::Builder::new()
            .name("stridelab-sim-lower".into())
            .spawn(move || {
                let mut levels = handed.recv().unwrap_or_default();
                let mut buffers = [Stream::default(), Stream::default()];
                let mut shadow = levels
                    .first_mut()
                    .filter(|_| detach_shadow)
                    .and_then(|level| ShadowThread::start(level, give_back.clone()));
                for mut chunk in incoming {
                    run_levels(&mut levels, &chunk, &mut buffers);
                    match &mut shadow {
                        Some(shadow) => shadow.send(chunk, levels[0].take_hit_log()),
                        None => {
                            chunk.clear();
                            // The hierarchy may have stopped taking chunks back: nothing to
                            // do then.
                            let _ = give_back.send(chunk);
                        }
                    }
                }
                if let Some(shadow) = shadow {
                    levels[0].attach_shadow(shadow.finish());
                }
                levels
            });
        let Ok(worker) = spawned else {
            return Err(levels);
        };
        // The worker holds the receiver until it has the levels.
        let _ = hand_over.send(levels);
        Ok(Self {
            chunks,
            emptied,
            worker,
        })
    }

    /// Sends `chunk` down and returns an empty stream to fill next (a used one if any has come
    /// back).
    pub(super) fn send(&mut self, chunk: Stream) -> Stream {
        // Only a worker that panicked refuses a chunk; `finish` reports the panic.
        let _ = self.chunks.send(chunk);
        self.emptied
            .try_recv()
            .unwrap_or_else(|_| Stream::with_capacity(CHUNK + super::BATCH))
    }

    /// Waits for every chunk sent to be simulated and returns the levels.
    pub(super) fn finish(self) -> Vec<LevelSim> {
        drop(self.chunks);
        match self.worker.join() {
            Ok(levels) => levels,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// The second level's 3C shadow on a thread of its own, taking each chunk after the lower
/// levels (`sim/detached.rs`).
struct ShadowThread {
    chunks: SyncSender<(Stream, HitLog)>,
    worker: JoinHandle<DetachedShadow>,
}

impl ShadowThread {
    /// Detaches `level`'s shadow onto a new thread, which passes the chunks it is done with
    /// to `give_back`. None if the level does not classify or no thread can be started (the
    /// shadow then stays with the level).
    fn start(level: &mut LevelSim, give_back: Sender<Stream>) -> Option<Self> {
        let detached = level.detach_shadow()?;
        let (chunks, incoming) = sync_channel::<(Stream, HitLog)>(IN_FLIGHT);
        // The shadow follows the spawn, so a failed spawn leaves it here.
        let (hand_over, handed) = channel::<DetachedShadow>();
        let spawned = std::thread::Builder::new()
            .name("stridelab-sim-3c".into())
            .spawn(move || {
                let mut shadow = handed.recv().expect("handed over after the spawn");
                for (mut chunk, hits) in incoming {
                    shadow.take(&chunk, &hits);
                    chunk.clear();
                    let _ = give_back.send(chunk);
                }
                shadow
            });
        let Ok(worker) = spawned else {
            level.attach_shadow(detached);
            return None;
        };
        let _ = hand_over.send(detached);
        Some(Self { chunks, worker })
    }

    /// Passes on a chunk the level has taken, with its hits.
    fn send(&mut self, chunk: Stream, hits: HitLog) {
        // Only a worker that panicked refuses a chunk; `finish` reports the panic.
        let _ = self.chunks.send((chunk, hits));
    }

    /// Waits for the shadow to take every chunk sent and returns it.
    fn finish(self) -> DetachedShadow {
        drop(self.chunks);
        match self.worker.join() {
            Ok(shadow) => shadow,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}
