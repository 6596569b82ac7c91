//! `compile()` and `Function`: a graph cloned into a `FunctionGraph` and run on data.

use std::fmt;
use std::sync::Arc;

use ragtime_core::limits::Limits;
use ragtime_core::{Error, ErrorKind, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{debugprint_function, FunctionGraph, Graph, PrintOptions, VarId};
use ragtime_opt::{optimize, optimize_staged, Level, OptimizeOptions, RewriteReport};
use ragtime_runtime::{call_context, with_fresh_budget, Interpreter};

use crate::estimate::{MemoryEstimate, ValueSize};
use crate::state::{Locked, State};
use crate::updates::{self, Update};

/// Compares the results of the graph after the stage `rewrite` (one application of a node
/// rewrite, a whole-graph pass, or the JIT) with those of the stage before it: the same values bit
/// for bit (NaN-aware), or errors of the same kind.
fn compare_stage(
    rewrite: &str,
    before: &str,
    expected: &Result<Vec<RaggedTensor>>,
    got: &Result<Vec<RaggedTensor>>,
    exact: bool,
) -> Result<()> {
    let mismatch = |what: String| {
        Err(Error::graph(format!(
            "Mode::Debug: rewrite `{rewrite}` (applied after `{before}`) changed the result: {what}"
        )))
    };
    match (expected, got) {
        (Ok(a), Ok(b)) => {
            for (k, (x, y)) in a.iter().zip(b).enumerate() {
                if exact && !(x.dtype() == y.dtype() && x.equals(y)) {
                    return mismatch(format!("output {k} was {x}, is now {y}"));
                }
                // JIT kernels use polynomial math and reassociated reductions: they must agree
                // within the conformance tolerance, and say where they do not.
                if let (false, Err(why)) = (exact, crate::case::compare(x, y)) {
                    return mismatch(format!("output {k}: {why}"));
                }
            }
            Ok(())
        }
        (Err(a), Err(b)) if a.kind() == b.kind() => Ok(()),
        (Err(a), Err(b)) => mismatch(format!("error kind {:?} became {:?} ({b})", a.kind(), b.kind())),
        (Err(a), Ok(_)) => mismatch(format!("it failed ({a}) and now succeeds")),
        (Ok(_), Err(b)) => mismatch(format!("it succeeded and now fails: {b}")),
    }
}

/// How a graph is compiled and run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// Every rewrite (merge, constant folding, canonicalization, fusion into `Composite` and
    /// `RowKernel` ops); fused ops the JIT lowers run as Cranelift machine code, the others as
    /// their chunked reference kernels.
    #[default]
    FastRun,
    /// Merge and dead-code elimination only; the reference interpreter runs each op's `perform`.
    FastCompile,
    /// As `FastRun`, plus the verifier after optimizing, a type check of every computed value on
    /// every call (in release builds too), and every rewrite's result checked against the
    /// unoptimized graph on the call's data: a mismatch names the rewrite and the output.
    Debug,
}

impl Mode {
    /// The graph-file and CLI name: `fast_run`, `fast_compile`, `debug`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::FastRun => "fast_run",
            Mode::FastCompile => "fast_compile",
            Mode::Debug => "debug",
        }
    }

    /// The mode called `name`.
    pub fn from_name(name: &str) -> Option<Mode> {
        [Mode::FastRun, Mode::FastCompile, Mode::Debug].into_iter().find(|m| m.name() == name)
    }
}

/// How to compile: the mode, and rewrites switched off or on by name or tag (see
/// `ragtime::ir::opt::REWRITES`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// The mode.
    pub mode: Mode,
    /// Rewrites left out, by name (`local_mul_one`) or tag (`fusion`, `canonicalize`); `jit`
    /// keeps fused ops on their reference implementations instead of machine code. A name that is
    /// neither is refused at compile time, with the closest known names.
    pub excluding: Vec<String>,
    /// Rewrites run even when the mode leaves them out.
    pub including: Vec<String>,
    /// Threads the JIT kernels may use (`None`: `RAGTIME_THREADS`, else every core).
    pub threads: Option<usize>,
    /// The limits each call runs under (`None`: [`Limits::trusted`], the library's default;
    /// graph files loaded by `ragtime run`, `conformance` and `ragtime::case` use
    /// [`Limits::untrusted`]).
    pub limits: Option<Limits>,
}

impl From<Mode> for CompileOptions {
    fn from(mode: Mode) -> Self {
        CompileOptions { mode, ..Default::default() }
    }
}

impl CompileOptions {
    /// Leaves out a rewrite or a tag.
    pub fn excluding(mut self, name_or_tag: impl Into<String>) -> Self {
        self.excluding.push(name_or_tag.into());
        self
    }

    /// Runs JIT kernels, and reference kernels that split their work (string hashing, embedding
    /// bags), on at most `n` threads (at least 1).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n.max(1));
        self
    }

    /// Runs a rewrite or a tag even if the mode leaves it out.
    pub fn including(mut self, name_or_tag: impl Into<String>) -> Self {
        self.including.push(name_or_tag.into());
        self
    }

    /// Runs every call under `limits` (e.g. [`Limits::untrusted`] for graphs from files).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// Gives each call a memory budget of `bytes` (under the limits set, else the trusted ones).
    pub fn memory_budget(mut self, bytes: usize) -> Self {
        self.limits = Some(self.limits.unwrap_or_else(Limits::trusted).with_call_budget(bytes));
        self
    }
}

/// The graph after one rewrite stage, kept by `Mode::Debug` to check each stage on real data.
#[derive(Clone)]
struct Stage {
    rewrite: &'static str,
    /// Whether the stage must give bit-identical results (no approximate rewrite applied).
    exact: bool,
    fg: FunctionGraph,
    interpreter: Interpreter,
}

/// A compiled graph: call it on values. `Function` is `Send + Sync`; calls of a function without
/// state share nothing mutable. A function reading [`State`]s binds their current values on each
/// call; a function with updates holds the locks of every state it reads or updates for the
/// whole call, so concurrent calls of it (or of any function updating the same states) are
/// serialized, and each call sees the states as the previous one left them.
#[derive(Clone)]
pub struct Function {
    fg: FunctionGraph,
    /// The states bound after the caller's inputs, in the graph's input order.
    states: Vec<State>,
    /// The updates applied after each call, from the outputs after the caller's.
    updates: Vec<Update>,
    /// How many outputs the caller gets (the others feed the updates).
    user_outputs: usize,
    interpreter: Interpreter,
    input_types: Vec<TensorType>,
    input_names: Vec<String>,
    mode: Mode,
    /// The limits each call runs under, its memory budget included.
    limits: Limits,
    /// Threads for JIT kernels and for reference kernels that split their work.
    threads: usize,
    report: RewriteReport,
    /// Fused ops running as JIT kernels.
    jit_kernels: usize,
    /// `Mode::Debug`: the unoptimized graph, then the graph after each rewrite stage.
    stages: Vec<Stage>,
    /// The graph before optimizing: `estimate_memory` bounds a call on it.
    unoptimized: Arc<FunctionGraph>,
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function").field("inputs", &self.input_names).field("mode", &self.mode).finish()
    }
}

fn verified(fg: &FunctionGraph, when: &str) -> Result<()> {
    let problems = fg.verify();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::graph(format!("the verifier found {when}: {}", problems.join("; "))))
    }
}

impl Function {
    /// Compiles the part of `graph` computing `outputs` from `inputs`.
    pub fn from_graph(
        graph: &Graph,
        inputs: &[VarId],
        outputs: &[VarId],
        options: impl Into<CompileOptions>,
    ) -> Result<Self> {
        Function::with_state(graph, inputs, outputs, &[], &[], options.into())
    }

    /// [`Function::from_graph`] with states: `bound` maps the graph's state variables to their
    /// states (those the outputs or updates read are bound on each call), `updates` are the
    /// `(state, new value)` pairs applied after each call.
    pub(crate) fn with_state(
        graph: &Graph,
        inputs: &[VarId],
        outputs: &[VarId],
        bound: &[(VarId, State)],
        new_values: &[(State, VarId)],
        options: CompileOptions,
    ) -> Result<Self> {
        let mode = options.mode;
        let plan = crate::updates::plan(graph, inputs, outputs, bound, new_values)?;
        let mut fg = FunctionGraph::new(graph, &plan.inputs, &plan.outputs)?;
        // The verifier is cheap next to running a graph: debug builds always run it.
        let verify = mode == Mode::Debug || cfg!(debug_assertions);
        if verify {
            verified(&fg, "before optimizing")?;
        }
        let level = if mode == Mode::FastCompile { Level::FastCompile } else { Level::Full };
        let opt = OptimizeOptions { level, excluding: options.excluding.clone(), including: options.including.clone() };
        // `jit` names the backend stage below, which `excluding` may switch off too.
        opt.check(&["jit"])?;
        let check_types = mode == Mode::Debug || cfg!(debug_assertions);
        let unoptimized = Arc::new(fg.clone());
        let mut stages = Vec::new();
        let report = if mode == Mode::Debug {
            let unoptimized = fg.clone();
            let mut snapshots = Vec::new();
            let report =
                optimize_staged(&mut fg, &opt, &mut |rewrite, exact, g| snapshots.push((rewrite, exact, g.clone())))?;
            stages.push(Stage {
                rewrite: "(unoptimized)",
                exact: true,
                interpreter: Interpreter::new(&unoptimized)?.checking_types(true),
                fg: unoptimized,
            });
            for (rewrite, exact, g) in snapshots {
                stages.push(Stage { rewrite, exact, interpreter: Interpreter::new(&g)?.checking_types(true), fg: g });
            }
            report
        } else {
            optimize(&mut fg, &opt)?
        };
        // FastRun and Debug run fused ops as machine code where the JIT lowers them.
        // `excluding("jit")` keeps the fused ops on their reference implementations.
        let jit_off = options.excluding.iter().any(|e| e == "jit");
        let threads = options.threads.unwrap_or_else(ragtime_jit::default_threads);
        let jit_kernels = if mode == Mode::FastCompile || jit_off { 0 } else { ragtime_jit::lower_fused(&mut fg)? };
        if verify {
            verified(&fg, "after optimizing")?;
        }
        let interpreter = Interpreter::new(&fg)?.checking_types(check_types);
        let (input_types, input_names) = fg.inputs()[..inputs.len()]
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let var = fg.var(v).ok_or_else(|| Error::graph("an input vanished"))?;
                Ok((var.ty.clone(), var.name.clone().unwrap_or_else(|| format!("input{i}"))))
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        Ok(Function {
            fg,
            states: plan.states,
            updates: plan.updates,
            user_outputs: outputs.len(),
            interpreter,
            input_types,
            input_names,
            mode,
            report,
            jit_kernels,
            stages,
            limits: options.limits.unwrap_or_else(Limits::trusted),
            threads,
            unoptimized,
        })
    }

    /// Runs the function. Every input is checked against its type before any data is touched;
    /// errors name the input or the node that failed.
    pub fn call(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        if inputs.len() != self.input_types.len() {
            return Err(Error::argument(
                "call",
                format!(
                    "the function takes {} inputs ({}), got {}",
                    self.input_types.len(),
                    self.input_names.join(", "),
                    inputs.len()
                ),
            ));
        }
        for (i, (value, ty)) in inputs.iter().zip(&self.input_types).enumerate() {
            // The success path allocates nothing; the message is built only for a refused value.
            if !ty.admits(value) {
                ty.check(value, &format!("input {i} (\"{}\")", self.input_names[i]))?;
            }
        }
        if self.states.is_empty() && self.updates.is_empty() {
            return self.run(inputs);
        }
        let mut locked = Locked::new(self.states.iter().chain(self.updates.iter().map(|u| &u.state)));
        let mut all = Vec::with_capacity(inputs.len() + self.states.len());
        all.extend_from_slice(inputs);
        for s in &self.states {
            all.push(locked.value(s)?.clone());
        }
        if self.updates.is_empty() {
            drop(locked);
            return self.run(&all);
        }
        let mut outputs = self.run(&all)?;
        // The call's references to the old values go before the updates, so a value no one
        // else holds is changed in place.
        drop(all);
        let extra = outputs.split_off(self.user_outputs);
        updates::apply(&self.updates, &extra, &mut locked, self.threads)?;
        Ok(outputs)
    }

    /// Runs the graph on the caller's inputs followed by the bound states' values, under a
    /// context of its own: the function's threads and limits, and a fresh memory budget that
    /// every data-sized buffer of the call is charged to.
    fn run(&self, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let ctx = call_context(self.limits).with_threads(self.threads).with_debug(self.mode == Mode::Debug);
        if self.mode == Mode::Debug {
            return self.call_checked(&ctx, inputs);
        }
        self.interpreter.run(&self.fg, &ctx, inputs)
    }

    /// `Mode::Debug`: runs the graph after every rewrite stage and compares each with the stage
    /// before it, so a rewrite that changes a result is named.
    ///
    /// The replays are checks, not the call: each runs under a fresh budget of its own (the
    /// function's, or the untrusted preset's, whichever is larger), and the final graph runs
    /// under the call's budget `ctx`, as in the other modes. So a call fits the budget in Debug
    /// exactly when it does in FastRun, and when the final graph runs out of it while the last
    /// replay succeeded, the final graph is run again under the replays' budget: if it then
    /// agrees with the replay, the caller gets the budget's error, not a blamed rewrite.
    fn call_checked(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let replay_budget = self.limits.call_budget.max(Limits::untrusted().call_budget);
        let replay = |interpreter: &Interpreter, fg: &FunctionGraph| {
            interpreter.run(fg, &with_fresh_budget(ctx, replay_budget), inputs)
        };
        let mut previous: Option<(&'static str, Result<Vec<RaggedTensor>>)> = None;
        for stage in &self.stages {
            let result = replay(&stage.interpreter, &stage.fg);
            if let Some((before, expected)) = &previous {
                compare_stage(stage.rewrite, before, expected, &result, stage.exact)?;
            }
            previous = Some((stage.rewrite, result));
        }
        let result = self.interpreter.run(&self.fg, ctx, inputs);
        if let Some((before, expected)) = &previous {
            let exact = self.jit_kernels == 0;
            let over_budget =
                matches!((&result, expected), (Err(e), Ok(_)) if e.kind() == ErrorKind::ResourceExhausted);
            if over_budget
                && compare_stage("jit", before, expected, &replay(&self.interpreter, &self.fg), exact).is_ok()
            {
                return result;
            }
            compare_stage("jit", before, expected, &result, exact)?;
        }
        result
    }

    /// Hands outputs the caller no longer needs back to the buffer pool (`ragtime_core::pool`)
    /// that every op's allocations are served from, so the next call writes into memory that is
    /// already mapped instead of paying page faults for fresh buffers (tens of milliseconds per call on outputs of tens of megabytes). Only buffers no
    /// other value shares are reused; anything else is simply dropped.
    ///
    /// ```
    /// use ragtime::prelude::*;
    /// let g = Graph::new();
    /// let x = g.input("x", TensorType::ragged(DType::F32, 1));
    /// let f = compile(&[&x], &[&(&x * 2.0 + 1.0)])?;
    /// let input = ragged![[1.0, 2.0], [3.0]]?;
    /// let mut out = f.call(std::slice::from_ref(&input))?;
    /// for _ in 0..3 {
    ///     f.recycle(out); // the previous result's buffer serves the next call
    ///     out = f.call(std::slice::from_ref(&input))?;
    /// }
    /// assert_eq!(out[0].to_string(), "<Ragged float32 [[3.0, 5.0], [7.0]]>");
    /// # Ok::<(), ragtime::Error>(())
    /// ```
    pub fn recycle(&self, outputs: impl IntoIterator<Item = RaggedTensor>) {
        outputs.into_iter().for_each(ragtime_core::pool::recycle);
    }

    /// How many fused ops run as JIT kernels (the others run their reference implementation).
    pub fn jit_kernels(&self) -> usize {
        self.jit_kernels
    }

    /// What the optimizer did: per rewrite, how often it applied and its time; node counts.
    pub fn rewrite_report(&self) -> &RewriteReport {
        &self.report
    }

    /// The optimized graph, in PyTensor's `debugprint` format with each node's position in the
    /// evaluation order.
    pub fn debugprint(&self) -> String {
        debugprint_function(&self.fg, PrintOptions { types: false, positions: true })
    }

    /// `debugprint` with each variable's type.
    pub fn debugprint_types(&self) -> String {
        debugprint_function(&self.fg, PrintOptions { types: true, positions: true })
    }

    /// The function's graph.
    pub fn fgraph(&self) -> &FunctionGraph {
        &self.fg
    }

    /// The input types, in call order.
    pub fn input_types(&self) -> &[TensorType] {
        &self.input_types
    }

    /// The input names, in call order (an input the graph left unnamed is `input{i}`).
    pub fn input_names(&self) -> &[String] {
        &self.input_names
    }

    /// How many values a call returns.
    pub fn num_outputs(&self) -> usize {
        self.user_outputs
    }

    /// The states a call binds (read by the outputs or the updates), in the graph's input order
    /// after the caller's inputs.
    pub fn states(&self) -> &[State] {
        &self.states
    }

    /// The updates applied after each call, one line each: the state and how its new value is
    /// applied (`replace`, `row scatter-subtract in place`, `scatter-subtract in place`).
    pub fn describe_updates(&self) -> Vec<String> {
        self.updates.iter().map(Update::describe).collect()
    }

    /// The output types the compiled graph records, in the order a call returns the outputs:
    /// every call's values meet them.
    pub fn output_types(&self) -> Vec<TensorType> {
        let outputs = &self.fg.outputs()[..self.user_outputs];
        outputs.iter().filter_map(|&v| self.fg.var(v)).map(|var| var.ty.clone()).collect()
    }

    /// The same function with a per-call memory budget of `bytes`: an op whose output or scratch
    /// would take the call past it is refused (`resource_exhausted`) before allocating. Without
    /// one, calls use the budget of the function's limits ([`CompileOptions::limits`]).
    pub fn with_memory_budget(mut self, bytes: usize) -> Self {
        self.limits = self.limits.with_call_budget(bytes);
        self
    }

    /// The same function running its calls under `limits`.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Predicts, before a call, what one call allocates for inputs of these sizes (one per
    /// input, in order; the bound states' current values are added): an estimate and, when every
    /// op's output size follows from its inputs' sizes, an upper bound on the peak bytes
    /// allocated, so a caller can size batches. The rules are in [`crate::estimate`]; what a call
    /// allocates in practice is its outputs plus a little scratch (the README's "Memory").
    ///
    /// ```
    /// use ragtime::prelude::*;
    /// use ragtime::estimate::ValueSize;
    /// let g = Graph::new();
    /// let x = g.input("x", TensorType::ragged(DType::F32, 1));
    /// let y = &x * 2.0f32 + 1.0f32;
    /// let f = compile(&[&x], &[&y]).unwrap();
    /// // 1,000 rows holding 10,000 values: the output's values take 40,000 bytes.
    /// let predicted = f.estimate_memory(&[ValueSize::ragged(&[1000], &[10_000])]).unwrap();
    /// assert!(predicted.estimate >= 40_000);
    /// assert!(predicted.upper_bound.unwrap() >= predicted.estimate);
    /// ```
    pub fn estimate_memory(&self, inputs: &[ValueSize]) -> Result<MemoryEstimate> {
        if inputs.len() != self.input_types.len() {
            return Err(Error::argument(
                "estimate_memory",
                format!("the function takes {} inputs, got {} sizes", self.input_types.len(), inputs.len()),
            ));
        }
        let mut all = inputs.to_vec();
        all.extend(self.states.iter().map(|s| ValueSize::of(&s.get())));
        crate::estimate::estimate(&self.fg, &self.unoptimized, &all, self.threads)
    }

    /// The limits its calls run under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The threads its calls may use.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The mode it was compiled in.
    pub fn mode(&self) -> Mode {
        self.mode
    }
}

#[cfg(test)]
mod tests {
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn function_is_send_and_sync() {
        assert_send_sync::<super::Function>();
    }
}
