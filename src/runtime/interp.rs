//! INTERP: runs linear programs directly in Rust (the executable specification).
