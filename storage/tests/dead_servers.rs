//! Recovering the commit logs of several dead servers into one tablet: servers on
//! shared storage keep their logs in directories of their own whose segments have
//! the same file names, and the edits split from each must all reach the tablet
//! (one server's recovered edits never replace another's).

mod common;

use std::collections::BTreeMap;

use bytes::Bytes;
use common::*;
use tabula_storage::{Durability, Engine, RowMutation};

fn engine_with_log(data: &std::path::Path, server: &str) -> Engine {
    let mut options = quiet_options(data, 1_000);
    options.log_dir = Some(data.join("logs").join(server));
    Engine::open(options).expect("engine opens")
}

fn write(engine: &Engine, row: &'static str, value: &'static str) {
    let tablet = engine
        .open_tablet(whole_table(1, two_family_schema()))
        .expect("tablet opens");
    let m = RowMutation::new(Bytes::from_static(row.as_bytes())).put(
        &b"a"[..],
        &b"q"[..],
        5,
        Bytes::from_static(value.as_bytes()),
    );
    tablet.mutate(&m, Durability::Sync).expect("acknowledged");
}

#[test]
fn edits_of_several_dead_servers_all_reach_the_tablet() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    // Server a writes, then dies with the row only in its log.
    write(&engine_with_log(data, "a"), "from-a", "1");
    // Server b serves the tablet next, writes, and dies the same way.
    write(&engine_with_log(data, "b"), "from-b", "2");
    let a_segments = files_with_suffix(&data.join("logs/a"), ".log");
    let b_segments = files_with_suffix(&data.join("logs/b"), ".log");
    let names = |paths: &[std::path::PathBuf]| -> Vec<String> {
        paths
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect()
    };
    assert!(
        names(&a_segments)
            .iter()
            .any(|n| names(&b_segments).contains(n)),
        "the two logs share segment names: {:?} {:?}",
        names(&a_segments),
        names(&b_segments)
    );

    // A third server recovers both logs, then opens the tablet.
    let c = engine_with_log(data, "c");
    c.recover_log_of(&data.join("logs/a")).unwrap();
    c.recover_log_of(&data.join("logs/b")).unwrap();
    let tablet = c
        .open_tablet(whole_table(1, two_family_schema()))
        .expect("tablet opens");
    let rows = latest_rows(&tablet);
    let got: BTreeMap<&[u8], &Bytes> = rows
        .iter()
        .map(|(row, cols)| (row.as_ref(), &cols["a:q"]))
        .collect();
    assert_eq!(
        got,
        BTreeMap::from([
            (&b"from-a"[..], &Bytes::from_static(b"1")),
            (&b"from-b"[..], &Bytes::from_static(b"2"))
        ])
    );
}
