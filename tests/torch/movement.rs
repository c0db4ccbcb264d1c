//! Movement ops; fixture made by `scripts/torch_fixtures/cases_movement.py`.

use super::CaseFn;

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![("reshape", |x| x[0].reshape([3, 4]))]
}
