//! Interleaved timing for `ragtime bench`: every side of a comparison (ragtime's call, each baseline
//! loop, the bandwidth probe) runs once per round, round after round, and each keeps its best time.
//! A slow spell of the machine (this VM's speed drifts for seconds at a time) then falls on every
//! side alike instead of on whichever side was being timed, so the ratios hold from run to run. A
//! one-thread loop beside all-core sides runs in rounds of its own ([`best_of_rounds_then_one_thread`]).

use std::time::Instant;

use ragtime::{Function, RaggedTensor};

use super::memory;

/// Times the part of one run of a side that counts; what a side does outside [`Clock::time`]
/// (dropping or recycling the previous outputs) is not timed.
#[derive(Debug)]
pub struct Clock {
    seconds: f64,
    warm_up: bool,
}

impl Clock {
    /// Runs `f`, adding its wall time to this run's.
    pub fn time<R>(&mut self, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let result = f();
        self.seconds += start.elapsed().as_secs_f64();
        result
    }

    /// Whether this is the warm-up round, whose times are not kept.
    pub fn is_warm_up(&self) -> bool {
        self.warm_up
    }
}

/// One side of an interleaved timing: called once per round.
pub type Side<'a, E> = &'a mut dyn FnMut(&mut Clock) -> Result<(), E>;

/// Runs every side once as a warm-up, then `runs` rounds in each of which every side runs once, in
/// order; returns each side's best (least) time over the rounds, in the order of `sides`.
pub fn best_of_rounds<E>(runs: usize, sides: &mut [Side<'_, E>]) -> Result<Vec<f64>, E> {
    let mut best = vec![f64::INFINITY; sides.len()];
    for round in 0..=runs {
        for (side, best) in sides.iter_mut().zip(&mut best) {
            let mut clock = Clock { seconds: 0.0, warm_up: round == 0 };
            side(&mut clock)?;
            if round > 0 {
                *best = best.min(clock.seconds);
            }
        }
    }
    Ok(best)
}

/// [`best_of_rounds`] over `sides` (ragtime's call and the loops on all cores), then, in rounds of
/// its own, `one_thread` (the baseline loop on one thread, where the comparison runs on several):
/// each side's best, and `one_thread`'s. Interleaved with the others, a one-thread side leaves the
/// other cores idle for a whole call, and on this VM the side after it then starts on cores the
/// hypervisor has put to sleep: W7 on two threads, right after the one-thread loop, took 9.7 to
/// 16.3 ms from run to run, and 9.5 to 10.2 ms once the one-thread loop ran apart.
pub fn best_of_rounds_then_one_thread<E>(
    runs: usize,
    sides: &mut [Side<'_, E>],
    one_thread: Option<Side<'_, E>>,
) -> Result<(Vec<f64>, Option<f64>), E> {
    let best = best_of_rounds(runs, sides)?;
    let one = match one_thread {
        Some(side) => best_of_rounds(runs, &mut [side])?.first().copied(),
        None => None,
    };
    Ok((best, one))
}

/// A side that times the whole of each run of `f` (a baseline loop).
pub fn whole<E>(mut f: impl FnMut()) -> impl FnMut(&mut Clock) -> Result<(), E> {
    move |clock| {
        clock.time(&mut f);
        Ok(())
    }
}

/// The best wall time in seconds of `runs` calls of `f` after one warm-up call, and the result of
/// one more call (a workload without a baseline: W5, W6). The previous result is dropped before
/// each call, outside the timed region, as a caller looping over batches would drop it. That last
/// call, untimed, records the peak bytes a call allocates (`memory::measure`): measured while timed,
/// the peak's compare-and-swap on every allocation was part of W6's time.
pub fn best_call<T, E>(runs: usize, mut f: impl FnMut() -> Result<T, E>) -> Result<(f64, T), E> {
    let mut last = None;
    let mut side = |clock: &mut Clock| {
        drop(last.take());
        last = Some(clock.time(&mut f)?);
        Ok(())
    };
    let best = best_of_rounds(runs, &mut [&mut side])?;
    drop(last.take());
    let (result, peak) = memory::measure(&mut f);
    memory::record(memory::CallMemory { fresh_peak: peak, ..Default::default() });
    Ok((best[0], result?))
}

/// ragtime's side of a comparison: calls of a compiled function, each first handing the previous
/// call's outputs back with `Function::recycle` (outside the timed region), as a caller looping over
/// batches would. Records the timed calls' peak allocation, and the warm-up call's, which is given
/// nothing back (`memory`).
#[derive(Debug)]
pub struct Recycling<'a> {
    f: &'a Function,
    inputs: &'a [RaggedTensor],
    last: Vec<RaggedTensor>,
}

impl<'a> Recycling<'a> {
    /// Calls of `f` on `inputs`.
    pub fn new(f: &'a Function, inputs: &'a [RaggedTensor]) -> Recycling<'a> {
        Recycling { f, inputs, last: Vec::new() }
    }

    /// One call: the side to pass to [`best_of_rounds`].
    pub fn round(&mut self, clock: &mut Clock) -> ragtime::Result<()> {
        let (f, inputs) = (self.f, self.inputs);
        if clock.is_warm_up() {
            // The first call finds the pool empty: what a call allocates when given nothing back.
            memory::record_estimate(f, inputs);
            self.last = memory::measured_call(|| f.call(inputs))?;
            return Ok(());
        }
        f.recycle(std::mem::take(&mut self.last));
        let (result, peak) = clock.time(|| memory::measure(|| f.call(inputs)));
        self.last = result?;
        memory::record(memory::CallMemory { recycled_peak: peak, ..Default::default() });
        Ok(())
    }

    /// The last call's outputs.
    pub fn into_outputs(self) -> Vec<RaggedTensor> {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_side_runs_once_per_round_in_order_after_a_warm_up() {
        let log = std::cell::RefCell::new(Vec::new());
        let mut a = |c: &mut Clock| -> Result<(), ()> {
            log.borrow_mut().push(('a', c.is_warm_up()));
            Ok(())
        };
        let mut b = |c: &mut Clock| -> Result<(), ()> {
            log.borrow_mut().push(('b', c.is_warm_up()));
            Ok(())
        };
        let best = best_of_rounds(2, &mut [&mut a, &mut b]).unwrap();
        assert_eq!(best.len(), 2);
        let want = [('a', true), ('b', true), ('a', false), ('b', false), ('a', false), ('b', false)];
        assert_eq!(*log.borrow(), want);
    }

    #[test]
    fn each_side_keeps_its_least_timed_part() {
        // A side's time is what it put through `Clock::time`: not the warm-up's (nothing timed) nor
        // the untimed 50 ms of every run.
        let mut side = |c: &mut Clock| -> Result<(), ()> {
            if !c.is_warm_up() {
                c.time(|| std::thread::sleep(std::time::Duration::from_millis(7)));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            Ok(())
        };
        let best = best_of_rounds(2, &mut [&mut side]).unwrap()[0];
        assert!((0.007..0.05).contains(&best), "{best}");
    }

    #[test]
    fn an_error_stops_the_rounds() {
        let mut runs = 0;
        let mut failing = |_: &mut Clock| {
            runs += 1;
            if runs == 2 {
                Err("second run")
            } else {
                Ok(())
            }
        };
        assert_eq!(best_of_rounds(5, &mut [&mut failing]), Err("second run"));
    }

    #[test]
    fn best_call_returns_the_result_of_the_measured_call_after_the_timed_ones() {
        let mut n = 0;
        let (seconds, last) = best_call(3, || -> Result<i32, ()> {
            n += 1;
            Ok(n)
        })
        .unwrap();
        // The warm-up, three timed calls, then the untimed one whose memory is measured.
        assert_eq!(last, 5, "best_call returns the fifth call's result");
        assert!(seconds >= 0.0);
    }
}
