//! The levels below the first on a thread of their own: the first level's misses reach them
//! in chunks over a bounded channel, so the first level takes the next accesses while the
//! lower levels take the last ones' misses. Exact: a level's state and counts depend only on
//! the accesses that reach it, in order (rule 5 of the simulator), and the channel keeps the
//! order. The thread runs from the first full chunk to the next flush, so a small simulation
//! never starts one.
//!
//! When the second level classifies misses (3C) and its first chunk is mostly moves' misses,
//! the second level instead stays with the first and its shadow runs on a thread of its own
//! (`sim/detached.rs`): each chunk, once the second level has taken it, goes on to the shadow
//! with the level's logged hits, and from there back to the first level for reuse; the levels
//! below the second, if any, run on another. There the level's lookups are few (a side at a
//! time) and the shadow's many; elsewhere the split bought nothing and cost CPU time (`sim
//! row-sum` 1.18×, `sim matmul 192 ijk` 1.20×, `sim chase 8M` 1.13×), so the shadow stays.

use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use super::detached::DetachedShadow;
use super::hits::HitLog;
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
    /// Starts the thread with `levels`; gives them back if no thread can be started.
    fn start(levels: Vec<LevelSim>) -> Result<Self, Vec<LevelSim>> {
        let (chunks, incoming) = sync_channel::<Stream>(IN_FLIGHT);
        let (give_back, emptied) = channel();
        // The levels follow the spawn, so a failed spawn leaves them here.
        let (hand_over, handed) = channel::<Vec<LevelSim>>();
        let spawned = std::thread::Builder::new()
            .name("stridelab-sim-lower".into())
            .spawn(move || {
                let mut levels = handed.recv().unwrap_or_default();
                let mut buffers = [Stream::default(), Stream::default()];
                for mut chunk in incoming {
                    run_levels(&mut levels, &chunk, &mut buffers);
                    chunk.clear();
                    // The hierarchy may have stopped taking chunks back: nothing to do then.
                    let _ = give_back.send(chunk);
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
    fn send(&mut self, chunk: Stream) -> Stream {
        // Only a worker that panicked refuses a chunk; `finish` reports the panic.
        let _ = self.chunks.send(chunk);
        reused(&self.emptied)
    }

    /// Waits for every chunk sent to be simulated and returns the levels.
    fn finish(self) -> Vec<LevelSim> {
        drop(self.chunks);
        match self.worker.join() {
            Ok(levels) => levels,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// A chunk that came back emptied, or a new one.
fn reused(emptied: &Receiver<Stream>) -> Stream {
    emptied
        .try_recv()
        .unwrap_or_else(|_| Stream::with_capacity(CHUNK + super::BATCH))
}

/// The levels below the first while they run apart from it, between a full chunk and a flush.
#[derive(Debug)]
pub(super) enum Below {
    /// All of them on a thread of their own.
    Thread(Lower),
    /// The second level here, its 3C shadow on a thread of its own, and any levels below it
    /// on another (boxed: it holds a whole level).
    Split(Box<Split>),
}

impl Below {
    /// Starts the threads for `levels` (all but the first), the second level's shadow apart
    /// if `detach_shadow` and it classifies; gives the levels back if no thread can start.
    pub(super) fn start(levels: Vec<LevelSim>, detach_shadow: bool) -> Result<Self, Vec<LevelSim>> {
        if detach_shadow {
            match Split::start(levels) {
                Ok(split) => return Ok(Self::Split(Box::new(split))),
                Err(back) => return Lower::start(back).map(Self::Thread),
            }
        }
        Lower::start(levels).map(Self::Thread)
    }

    /// Passes the first level's misses `chunk` on; returns an empty stream to fill next.
    pub(super) fn send(&mut self, chunk: Stream) -> Stream {
        match self {
            Self::Thread(lower) => lower.send(chunk),
            Self::Split(split) => split.send(chunk),
        }
    }

    /// Waits for every chunk sent to be simulated and returns the levels.
    pub(super) fn finish(self) -> Vec<LevelSim> {
        match self {
            Self::Thread(lower) => lower.finish(),
            Self::Split(split) => split.finish(),
        }
    }
}

/// The second level taken here, a chunk at a time, its shadow on a thread of its own
/// ([`ShadowThread`]) taking each chunk after it, and the levels below it on another
/// ([`Lower`]). The first level's thread then does the second level's lookups, few for moves'
/// misses, and the shadow, the larger part, has a CPU of its own: with the lookups on a third
/// thread, a run whose shadow shared a CPU with them took 0.08–0.09 s instead of 0.065–0.07 on
/// the naive transpose.
#[derive(Debug)]
pub(super) struct Split {
    second: LevelSim,
    shadow: ShadowThread,
    /// The levels below the second, if any.
    lower: Option<Lower>,
    /// The second level's misses not yet passed to `lower`.
    misses: Stream,
    /// Chunks the shadow is done with.
    emptied: Receiver<Stream>,
}

impl Split {
    /// Gives the levels back if the second does not classify or no thread can start.
    fn start(mut levels: Vec<LevelSim>) -> Result<Self, Vec<LevelSim>> {
        if levels.is_empty() {
            return Err(levels);
        }
        let below = levels.split_off(1);
        let mut second = levels.pop().expect("one level left");
        let (give_back, emptied) = channel();
        let Some(shadow) = ShadowThread::start(&mut second, give_back) else {
            let mut back = vec![second];
            back.extend(below);
            return Err(back);
        };
        let lower = match below.is_empty() {
            true => None,
            false => match Lower::start(below) {
                Ok(lower) => Some(lower),
                Err(below) => {
                    shadow.finish().reattach(&mut second);
                    let mut back = vec![second];
                    back.extend(below);
                    return Err(back);
                }
            },
        };
        Ok(Self {
            second,
            shadow,
            lower,
            misses: Stream::default(),
            emptied,
        })
    }

    fn send(&mut self, chunk: Stream) -> Stream {
        let misses = self.lower.is_some().then_some(&mut self.misses);
        take_stream(&mut self.second, &chunk, misses);
        self.shadow.send(chunk, self.second.take_hit_log());
        if let Some(lower) = &mut self.lower
            && self.misses.weight() >= CHUNK as u64
        {
            let misses = std::mem::take(&mut self.misses);
            self.misses = lower.send(misses);
        }
        reused(&self.emptied)
    }

    fn finish(mut self) -> Vec<LevelSim> {
        let below = self.lower.map(|mut lower| {
            if !self.misses.is_empty() {
                lower.send(std::mem::take(&mut self.misses));
            }
            lower.finish()
        });
        self.shadow.finish().reattach(&mut self.second);
        let mut levels = vec![self.second];
        levels.extend(below.into_iter().flatten());
        levels
    }
}

/// The second level's 3C shadow on a thread of its own, taking each chunk after the level
/// (`sim/detached.rs`).
#[derive(Debug)]
struct ShadowThread {
    chunks: SyncSender<(Stream, HitLog)>,
    worker: JoinHandle<DetachedShadow>,
}

impl ShadowThread {
    /// Detaches `level`'s shadow onto a new thread, which passes the chunks it is done with
    /// to `give_back`. None if the level does not classify or no thread can be started (the
    /// shadow then stays with the level).
    fn start(level: &mut LevelSim, give_back: Sender<Stream>) -> Option<Self> {
        let detached = DetachedShadow::detach(level)?;
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
            detached.reattach(level);
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
