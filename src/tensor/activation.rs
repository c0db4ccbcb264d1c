//! Activation functions, as compositions of elementwise ops with PyTorch's values and
//! gradients (including at the kinks: `hardtanh` passes no gradient at its bounds, `elu`'s
//! gradient at 0 is `alpha`, ...). `relu`, `sigmoid` and `tanh` are in `elementwise.rs`.
//!
//! A branch of a `where` that is not selected still gets a zero gradient, and `0 * inf` is NaN:
//! so branches that could overflow (`exp` of a large input) are evaluated on a safe input
//! wherever they are not used.

use super::grad::with_derivatives;
use super::Tensor;

/// SELU's constants (Klambauer et al., as in PyTorch).
const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

impl Tensor {
    /// `min(max(x, min), max)`; the gradient is 0 at and beyond the bounds (PyTorch's
    /// `hardtanh`).
    pub fn hardtanh(&self, min: f64, max: f64) -> Tensor {
        self.float().via_f32(|x| x.le(min).where_(x.konst(min), x.ge(max).where_(x.konst(max), x)))
    }
    /// `min(max(x, 0), 6)`.
    pub fn relu6(&self) -> Tensor {
        self.hardtanh(0.0, 6.0)
    }
    /// `x` for `x > 0`, `slope * x` otherwise (the gradient at 0 is `slope`).
    pub fn leaky_relu(&self, slope: f64) -> Tensor {
        self.float().via_f32(|x| x.gt(0.0).where_(x, x.mul(slope)))
    }
    /// `x` for `x > 0`, `alpha * (exp(x) - 1)` otherwise.
    pub fn elu(&self, alpha: f64) -> Tensor {
        self.float().via_f32(|x| {
            // NaN takes the identity branch, whose gradient is PyTorch's there (1).
            let neg = x.le(0.0).where_(x, 0.0);
            x.le(0.0).where_(neg.expm1().mul(alpha), x)
        })
    }
    /// `scale * elu(x, alpha)` with the self-normalizing constants.
    pub fn selu(&self) -> Tensor {
        self.elu(SELU_ALPHA).mul(SELU_SCALE)
    }
    /// `x` for `x > 0`, `alpha * (exp(x / alpha) - 1)` otherwise.
    pub fn celu(&self, alpha: f64) -> Tensor {
        self.float().via_f32(|x| {
            let neg = x.le(0.0).where_(x, 0.0);
            x.le(0.0).where_(neg.div(alpha).expm1().mul(alpha), x)
        })
    }
    /// GELU, `x * Phi(x)` with the exact normal CDF (PyTorch's default `approximate="none"`).
    pub fn gelu(&self) -> Tensor {
        self.float().via_f32(|x| {
            let cdf = |x: &Tensor| x.mul(-std::f64::consts::FRAC_1_SQRT_2).erfc().mul(0.5);
            // PyTorch's derivative `Phi(x) + x phi(x)` (NaN at ±inf, as there).
            let pdf_scale = 0.5 * std::f64::consts::FRAC_2_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2;
            with_derivatives(x.mul(cdf(x)), &[x], move |x| {
                let x = &x[0];
                vec![cdf(x).add(x.mul(x.square().mul(-0.5).exp().mul(pdf_scale)))]
            })
        })
    }
    /// GELU as `F.gelu(x, approximate=...)`: `"none"` (exact) or `"tanh"`.
    pub fn gelu_approximate(&self, approximate: &str) -> Tensor {
        match approximate {
            "none" => self.gelu(),
            "tanh" => self.gelu_tanh(),
            other => panic!("gelu: approximate must be \"none\" or \"tanh\", got {other:?}"),
        }
    }
    /// GELU's tanh approximation (`approximate="tanh"`, tinygrad's `gelu`).
    pub fn gelu_tanh(&self) -> Tensor {
        self.float().via_f32(|x| {
            let inner = x.mul(x).mul(x).mul(0.044715).add(x).mul((2.0 / std::f64::consts::PI).sqrt());
            x.mul(0.5).mul(inner.tanh().add(1.0))
        })
    }
    /// `x * sigmoid(1.702 x)`.
    pub fn quick_gelu(&self) -> Tensor {
        self.float().via_f32(|x| x.mul(x.mul(1.702).sigmoid()))
    }
    /// `x * sigmoid(x)` (SiLU).
    pub fn silu(&self) -> Tensor {
        self.float().via_f32(|x| x.mul(x.sigmoid()))
    }
    /// Same as [`Tensor::silu`].
    pub fn swish(&self) -> Tensor {
        self.silu()
    }
    /// `relu6(x + 3) / 6`; the gradient is 0 at `x = ±3`, as PyTorch's.
    pub fn hardsigmoid(&self) -> Tensor {
        let x = self.float();
        // PyTorch's derivative: 1/6 strictly inside (-3, 3), 0 elsewhere and at NaN.
        with_derivatives(x.add(3.0).relu6().div(6.0), &[&x], |x| {
            vec![x[0].gt(-3.0).bitand(x[0].lt(3.0)).where_(1.0 / 6.0, 0.0)]
        })
    }
    /// `x * relu6(x + 3) / 6`, with PyTorch's gradients at the kinks (0 at -3, 1 at 3).
    pub fn hardswish(&self) -> Tensor {
        self.float().via_f32(|x| {
            let mid = x.mul(x.add(3.0)).div(6.0);
            // `x * 0` below -3: NaN at -inf, as PyTorch's `x * relu6(x + 3) / 6`.
            x.le(-3.0).where_(x.mul(0.0), x.lt(3.0).where_(mid, x))
        })
    }
    /// `log(1 + exp(beta x)) / beta`, and `x` where `beta x > threshold` (PyTorch's defaults
    /// are `beta = 1`, `threshold = 20`, as [`Tensor::softplus`]).
    pub fn softplus_with(&self, beta: f64, threshold: f64) -> Tensor {
        self.float().via_f32(|x| {
            let bx = x.mul(beta);
            let linear = bx.gt(threshold);
            let safe = linear.where_(0.0, &bx);
            linear.where_(x, safe.exp().log1p().div(beta))
        })
    }
    /// `log(1 + exp(x))` (`beta = 1`, linear above 20).
    pub fn softplus(&self) -> Tensor {
        self.softplus_with(1.0, 20.0)
    }
    /// `x * tanh(softplus(x))`.
    pub fn mish(&self) -> Tensor {
        self.float().via_f32(|x| x.mul(x.softplus().tanh()))
    }
    /// `x / (1 + |x|)`.
    pub fn softsign(&self) -> Tensor {
        self.float().via_f32(|x| x.div(x.abs().add(1.0)))
    }
    /// `log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))`, stable for large `|x|`.
    pub fn logsigmoid(&self) -> Tensor {
        self.float().via_f32(|x| {
            let e = x.abs_kink_up().neg().exp();
            x.lt(0.0).where_(x, 0.0).sub(e.log1p())
        })
    }
}
