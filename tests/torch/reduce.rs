//! Reductions and matmul; fixture made by `scripts/torch_fixtures/cases_reduce.py`.

use super::CaseFn;

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![("sum_all", |x| x[0].sum())]
}
