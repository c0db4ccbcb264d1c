//! Loss functions with `torch.nn.functional`'s numerics and gradients: cross entropy (class
//! indices or probabilities, label smoothing, ignored classes, class weights), NLL, binary
//! cross entropy on probabilities and on logits, MSE and L1; and `one_hot`.

use super::Tensor;
use crate::uop::DType;

/// How a loss reduces its per-element values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Reduction {
    /// The per-element losses.
    None,
    /// Their mean (weighted where the loss has class weights).
    #[default]
    Mean,
    /// Their sum.
    Sum,
}

/// Options of [`Tensor::cross_entropy_with`] and [`Tensor::nll_loss_with`], with PyTorch's
/// defaults (`Mean`, no smoothing, `ignore_index = -100`, no weights).
#[derive(Clone, Debug)]
pub struct CrossEntropyOpts {
    pub reduction: Reduction,
    /// Mixes the target with the uniform distribution: `(1 - s) * target + s / classes`.
    pub label_smoothing: f64,
    /// Class-index targets equal to this contribute nothing (and do not count in the mean).
    pub ignore_index: i64,
    /// A weight per class (shape `[classes]`).
    pub weight: Option<Tensor>,
}

impl Default for CrossEntropyOpts {
    fn default() -> Self {
        CrossEntropyOpts { reduction: Reduction::Mean, label_smoothing: 0.0, ignore_index: -100, weight: None }
    }
}

fn reduce(loss: &Tensor, reduction: Reduction) -> Tensor {
    match reduction {
        Reduction::None => loss.clone(),
        Reduction::Mean => loss.mean(),
        Reduction::Sum => loss.sum(),
    }
}

impl Tensor {
    /// `[..., num_classes]` int64 with a 1 at each element's class (classes outside
    /// `0..num_classes` give all zeros): a comparison with `arange`, no gather.
    pub fn one_hot(&self, num_classes: usize) -> Tensor {
        assert!(
            self.dtype().is_int(),
            "one_hot: needs an integer tensor of class indices, got {:?} (shape {:?})",
            self.dtype(),
            self.shape()
        );
        // A class outside 0..num_classes is an error (PyTorch's), not a row of zeros.
        super::checks::check_indices(self, 0, num_classes as i64, format!("one_hot: {num_classes} classes"));
        let classes = Tensor::iota(num_classes, self.dtype(), &self.device());
        self.unsqueeze(-1).eq(classes).cast(DType::I64)
    }

    /// Cross entropy of logits `[classes]`, `[N, classes]` or `[N, classes, d1, ...]` against
    /// class indices (`[]`, `[N]`, `[N, d1, ...]`, any int dtype) or class probabilities (a
    /// float tensor shaped like the logits), with PyTorch's defaults.
    pub fn cross_entropy(&self, target: &Tensor) -> Tensor {
        self.cross_entropy_with(target, &CrossEntropyOpts::default())
    }

    /// [`Tensor::cross_entropy`] with options (`F.cross_entropy`'s arguments).
    pub fn cross_entropy_with(&self, target: &Tensor, opts: &CrossEntropyOpts) -> Tensor {
        let cdim = if self.ndim() >= 2 { 1 } else { 0 };
        let logp = self.log_softmax(cdim as isize);
        if target.dtype().is_float() {
            assert_eq!(
                target.shape(),
                self.shape(),
                "cross_entropy: probability targets must have the logits' shape {:?}, got {:?}",
                self.shape(),
                target.shape()
            );
            return prob_cross_entropy(&class_last(&logp, cdim), &class_last(target, cdim), opts);
        }
        index_cross_entropy(&class_last(&logp, cdim), target, opts, "cross_entropy")
    }

    /// Negative log likelihood of log-probabilities (shaped as for `cross_entropy`) against class
    /// indices, with PyTorch's defaults.
    pub fn nll_loss(&self, target: &Tensor) -> Tensor {
        self.nll_loss_with(target, &CrossEntropyOpts::default())
    }

    /// [`Tensor::nll_loss`] with options (`label_smoothing` must be 0: `F.nll_loss` has none).
    pub fn nll_loss_with(&self, target: &Tensor, opts: &CrossEntropyOpts) -> Tensor {
        assert!(opts.label_smoothing == 0.0, "nll_loss: has no label smoothing, got {}", opts.label_smoothing);
        let cdim = if self.ndim() >= 2 { 1 } else { 0 };
        index_cross_entropy(&class_last(self, cdim), target, opts, "nll_loss")
    }

    /// tinygrad's cross entropy of logits with the classes on the last axis against integer
    /// labels (`[...]`); labels equal to `ignore_index` (tinygrad's default is -1) count for
    /// nothing.
    pub fn sparse_categorical_crossentropy(
        &self,
        labels: &Tensor,
        ignore_index: i64,
        label_smoothing: f64,
        reduction: Reduction,
    ) -> Tensor {
        let opts = CrossEntropyOpts { reduction, label_smoothing, ignore_index, weight: None };
        index_cross_entropy(&self.log_softmax(-1), labels, &opts, "sparse_categorical_crossentropy")
    }

    /// Binary cross entropy of probabilities `self` against targets `y` (same shape), each log
    /// clamped at -100 as PyTorch does.
    pub fn binary_crossentropy(&self, y: &Tensor, reduction: Reduction) -> Tensor {
        let p = self.float();
        // PyTorch raises for probabilities outside [0, 1] (NaN included), checked when realized.
        super::checks::check_condition(
            &p.ge(0.0).bitand(p.le(1.0)).logical_not(),
            format!("binary_crossentropy: every element of the input {:?} must be a probability in [0, 1]", p.shape()),
        );
        let clamped = |l: Tensor| l.lt(-100.0).where_(-100.0, &l);
        let (lp, lq) = (clamped(p.log()), clamped(p.neg().log1p()));
        let y = y.cast(p.dtype());
        reduce(&y.mul(lp).add(y.neg().add(1.0).mul(lq)).neg(), reduction)
    }

    /// Binary cross entropy of logits `self` against targets `y`, in the stable form
    /// `(1 - y) x + (1 + (w - 1) y) (log1p(exp(-|x|)) + max(-x, 0))` with `w = pos_weight`.
    pub fn binary_crossentropy_logits(&self, y: &Tensor, reduction: Reduction, pos_weight: Option<&Tensor>) -> Tensor {
        let x = self.float();
        let y = y.cast(x.dtype());
        let softplus_neg = x.abs_kink_up().neg().exp().log1p().add(x.lt(0.0).where_(x.neg(), 0.0));
        let log_weight = match pos_weight {
            Some(w) => w.sub(1.0).mul(&y).add(1.0),
            None => x.ones_like(),
        };
        let loss = y.neg().add(1.0).mul(&x).add(log_weight.mul(softplus_neg));
        reduce(&loss, reduction)
    }

    /// Mean squared error (`F.mse_loss`).
    pub fn mse_loss(&self, y: &Tensor, reduction: Reduction) -> Tensor {
        let d = self.sub(y);
        reduce(&d.mul(&d), reduction)
    }

    /// Mean absolute error (`F.l1_loss`; the gradient at 0 is 0).
    pub fn l1_loss(&self, y: &Tensor, reduction: Reduction) -> Tensor {
        reduce(&self.sub(y).abs(), reduction)
    }
}

/// `t` with its class axis `cdim` moved last.
fn class_last(t: &Tensor, cdim: usize) -> Tensor {
    if t.ndim() < 2 {
        return t.clone();
    }
    let mut order: Vec<usize> = (0..t.ndim()).filter(|&a| a != cdim).collect();
    order.push(cdim);
    t.permute(order)
}

/// PyTorch's `nll_loss` (and label smoothing) on log-probabilities `logp` `[..., C]` against
/// class indices `target` `[...]`.
fn index_cross_entropy(logp: &Tensor, target: &Tensor, opts: &CrossEntropyOpts, name: &str) -> Tensor {
    let lshape = logp.shape();
    let classes = *lshape.last().unwrap_or_else(|| panic!("{name}: logits must have a class axis"));
    assert!(
        target.dtype().is_int(),
        "{name}: class-index targets must be integers, got {:?} (shape {:?})",
        target.dtype(),
        target.shape()
    );
    assert_eq!(
        target.shape()[..],
        lshape[..lshape.len() - 1],
        "{name}: targets of shape {:?} do not match logits of shape {lshape:?} (classes on the last axis here)",
        target.shape()
    );
    let t = target.cast(DType::I64);
    let valid = t.ne(opts.ignore_index);
    // Targets other than `ignore_index` must be classes.
    let checked = valid.where_(&t, 0i64);
    super::checks::check_indices(&checked, 0, classes as i64, format!("{name}: class targets for {classes} classes"));
    let hit = t.unsqueeze(-1).eq(Tensor::iota(classes, DType::I64, &logp.device()));
    let class_w = opts.weight.as_ref().map(|w| w.cast(logp.dtype()));
    let target_w = match &class_w {
        Some(w) => hit.where_(w, 0.0).sum_axis(-1),
        None => hit.where_(logp.ones_like(), 0.0).sum_axis(-1),
    };
    let target_w = valid.where_(&target_w, 0.0);
    let picked = hit.where_(logp, 0.0).sum_axis(-1);
    let nll = valid.where_(picked.neg().mul(&target_w), 0.0);
    let s = opts.label_smoothing;
    let smooth = if s > 0.0 {
        let weighted = match &class_w {
            Some(w) => logp.mul(w),
            None => logp.clone(),
        };
        Some(valid.where_(weighted.sum_axis(-1).neg(), 0.0))
    } else {
        None
    };
    let mix = |nll: Tensor, smooth: Option<Tensor>| match smooth {
        Some(sm) => nll.mul(1.0 - s).add(sm.mul(s / classes as f64)),
        None => nll,
    };
    match opts.reduction {
        Reduction::None => mix(nll, smooth),
        Reduction::Sum => mix(nll.sum(), smooth.map(|t| t.sum())),
        // Normalized by the total weight of the counted targets, as PyTorch.
        Reduction::Mean => mix(nll.sum(), smooth.map(|t| t.sum())).div(target_w.sum()),
    }
}

/// Cross entropy against class probabilities (classes on the last axis of both).
fn prob_cross_entropy(logp: &Tensor, target: &Tensor, opts: &CrossEntropyOpts) -> Tensor {
    let classes = *logp.shape().last().expect("cross_entropy: logits must have a class axis");
    let s = opts.label_smoothing;
    let target = if s > 0.0 { target.mul(1.0 - s).add(s / classes as f64) } else { target.clone() };
    let mut prod = logp.mul(&target);
    if let Some(w) = &opts.weight {
        prod = prod.mul(w.cast(logp.dtype()));
    }
    let loss = prod.sum_axis(-1).neg();
    match opts.reduction {
        Reduction::None => loss,
        Reduction::Sum => loss.sum(),
        // Divided by the number of samples (not by the weights), as PyTorch.
        Reduction::Mean => loss.sum().div((logp.numel() / classes.max(1)) as f64),
    }
}
