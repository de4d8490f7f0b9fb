//! Built-in functions: conversion.

use super::FuncDef;

/// The conversion functions.
pub static FUNCS: &[FuncDef] = &[];
