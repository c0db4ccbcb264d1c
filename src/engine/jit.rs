//! TinyJit: capture the kernels a function launches and replay them.
//!
//! The first call runs the function normally. The second call runs it again while the engine
//! records every step it executes (kernel launches and copies, with their buffers). Later
//! calls skip the front end and the scheduler: they replay the recorded steps, with the
//! buffers of the new inputs in place of the captured ones. Outputs come back in the same
//! buffers on every replay, like tinygrad's.

use super::Step;
use crate::error::{Error, Result};
use crate::runtime::Buffer;
use crate::schedule::existing_buffer;
use crate::tensor::Tensor;
use crate::uop::DType;
use std::cell::RefCell;
use std::sync::Arc;

struct Recorded {
    step: Step,
    bufs: Vec<Arc<Buffer>>,
    device: String,
}

thread_local! {
    static CAPTURE: RefCell<Option<Vec<Recorded>>> = const { RefCell::new(None) };
}

/// Whether a TinyJit capture is running on this thread (reading data is an error then).
pub fn is_capturing() -> bool {
    CAPTURE.with(|c| c.borrow().is_some())
}

/// Called by the engine for every executed step.
pub(crate) fn record(step: Step, bufs: Vec<Arc<Buffer>>, device: String) {
    CAPTURE.with(|c| {
        if let Some(list) = c.borrow_mut().as_mut() {
            list.push(Recorded { step, bufs, device });
        }
    });
}

/// What a call's inputs must look like to replay.
#[derive(Clone, Debug, PartialEq)]
struct InputSpec {
    shape: Vec<usize>,
    dtype: DType,
    device: String,
}

struct Captured {
    steps: Vec<Recorded>,
    inputs: Vec<InputSpec>,
    /// The input buffers of the captured call, replaced by the new ones on replay.
    input_bufs: Vec<Arc<Buffer>>,
    outputs: Vec<(Arc<Buffer>, Vec<usize>)>,
}

type JitFn = Box<dyn FnMut(&[Tensor]) -> Vec<Tensor>>;

/// A function whose kernels are captured on the second call and replayed afterwards.
pub struct TinyJit {
    f: JitFn,
    calls: usize,
    captured: Option<Captured>,
}

fn jit_enabled() -> bool {
    crate::helpers::getenv_int("JIT", 1) != 0
}

fn buffer_of_input(t: &Tensor) -> Result<Arc<Buffer>> {
    t.realize()?;
    existing_buffer(&t.uop()).ok_or_else(|| Error::Jit("TinyJit: an input is not backed by a buffer".into()))
}

impl TinyJit {
    pub fn new(f: impl FnMut(&[Tensor]) -> Vec<Tensor> + 'static) -> TinyJit {
        TinyJit { f: Box::new(f), calls: 0, captured: None }
    }

    /// Number of steps (kernels and copies) a replay runs, once captured.
    pub fn captured_len(&self) -> Option<usize> {
        self.captured.as_ref().map(|c| c.steps.len())
    }

    /// Calls the function (first call), captures it (second call) or replays it (later calls).
    pub fn call(&mut self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        let specs: Vec<InputSpec> =
            inputs.iter().map(|t| InputSpec { shape: t.shape(), dtype: t.dtype(), device: t.device() }).collect();
        let bufs: Vec<Arc<Buffer>> = inputs.iter().map(|t| buffer_of_input(t)).collect::<Result<_>>()?;
        self.calls += 1;
        if !jit_enabled() || self.calls == 1 {
            return self.run_plain(inputs);
        }
        if self.captured.is_none() {
            return self.capture(inputs, specs, bufs);
        }
        self.replay(&specs, &bufs)
    }

    fn run_plain(&mut self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        let owned: Vec<Tensor> = inputs.iter().map(|t| (*t).clone()).collect();
        let outs = (self.f)(&owned);
        Tensor::realize_all(&outs.iter().collect::<Vec<_>>())?;
        Ok(outs)
    }

    fn capture(&mut self, inputs: &[&Tensor], specs: Vec<InputSpec>, bufs: Vec<Arc<Buffer>>) -> Result<Vec<Tensor>> {
        for (i, a) in bufs.iter().enumerate() {
            if bufs[..i].iter().any(|b| Arc::ptr_eq(a, b)) {
                return Err(Error::Jit("TinyJit: the same buffer is passed as two inputs".into()));
            }
        }
        CAPTURE.with(|c| *c.borrow_mut() = Some(Vec::new()));
        let result = self.run_plain(inputs);
        let steps = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
        let outs = result?;
        let outputs = outs
            .iter()
            .map(|t| {
                Ok((
                    existing_buffer(&t.uop()).ok_or_else(|| Error::Jit("TinyJit: output not realized".into()))?,
                    t.shape(),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        if crate::helpers::debug_level() >= 1 {
            eprintln!("TinyJit: captured {} steps", steps.len());
        }
        self.captured = Some(Captured { steps, inputs: specs, input_bufs: bufs, outputs });
        Ok(outs)
    }

    fn replay(&mut self, specs: &[InputSpec], bufs: &[Arc<Buffer>]) -> Result<Vec<Tensor>> {
        let cap = self.captured.as_ref().expect("replay without capture");
        if specs != cap.inputs.as_slice() {
            return Err(Error::Jit(format!(
                "TinyJit: called with inputs {:?}, but captured with {:?}; make a new TinyJit for other shapes, dtypes or devices",
                specs, cap.inputs
            )));
        }
        for s in &cap.steps {
            let b: Vec<Arc<Buffer>> = s
                .bufs
                .iter()
                .map(|b| match cap.input_bufs.iter().position(|ib| Arc::ptr_eq(ib, b)) {
                    Some(k) => bufs[k].clone(),
                    None => b.clone(),
                })
                .collect();
            s.step.run(&b, &s.device)?;
        }
        Ok(cap
            .outputs
            .iter()
            .map(|(b, shape)| Tensor::from_uop(crate::tensor::buffer_view_pub(b.clone(), shape)))
            .collect())
    }
}
