#![doc = include_str!("../README.md")]
#![warn(missing_docs, missing_debug_implementations)]

pub mod emulator;
pub mod fault_proxy;
