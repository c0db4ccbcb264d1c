//! Elementwise ops; fixture made by `scripts/torch_fixtures/cases_elementwise.py`.

use super::CaseFn;

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("add", |x| &x[0] + &x[1]),
        ("int_add", |x| &x[0] + &x[1]),
        ("lt", |x| x[0].lt(&x[1])),
    ]
}
