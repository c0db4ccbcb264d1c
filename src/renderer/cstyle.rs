//! The C-style renderer (C, and dialect layers for OpenCL C / CUDA C).
