//! The pod-behaviour model (see the module docs of its parts).
