//! Helpers shared by the lock-service tests: the `LockService` contract every
//! implementation must pass, and a real etcd server to run it against.
//! Must not: mock a lock service.
#![allow(dead_code)]

pub mod etcd;
pub mod lock_contract;
