//! Thrift1 over every transport and protocol HBase offers (buffered/framed ×
//! binary/compact) against the real `tabula` binary: the same calls give the same
//! answers, declared exceptions and TApplicationExceptions arrive intact, and the
//! connection stays usable after each.

mod common;

use common::*;
use tabula_thrift::hbase::{BatchMutation, THbaseSyncClient};
use thrift::ApplicationErrorKind;

const MODES: [(Framing, Protocol); 4] = [
    (Framing::Buffered, Protocol::Binary),
    (Framing::Framed, Protocol::Binary),
    (Framing::Buffered, Protocol::Compact),
    (Framing::Framed, Protocol::Compact),
];

#[test]
fn every_mode_creates_writes_reads_and_scans() {
    for (framing, protocol) in MODES {
        let mut c = shared().client_with(framing, protocol);
        let t = unique(&format!("mode_{framing:?}_{protocol:?}").to_lowercase());
        create(&mut c, &t, &["cf"]);
        let batches = (0..3)
            .map(|i| {
                BatchMutation::new(
                    format!("r{i}").into_bytes(),
                    vec![put_m("cf:a", format!("v{i}").as_bytes())],
                )
            })
            .collect();
        c.mutate_rows(t.clone(), batches, no_attrs()).unwrap();
        let rows = c
            .get_rows(t.clone(), vec![b"r2".to_vec(), b"r0".to_vec()], no_attrs())
            .unwrap();
        assert_eq!(rows_of(&rows), vec!["r2", "r0"], "{framing:?} {protocol:?}");
        assert_eq!(columns_of(&rows[0])["cf:a"], "v2");
        assert_eq!(
            c.atomic_increment(t.clone(), b"n".to_vec(), b"cf:c".to_vec(), 41)
                .unwrap(),
            41
        );
        let id = c
            .scanner_open_with_scan(t.clone(), tscan(), no_attrs())
            .unwrap();
        assert_eq!(rows_of(&drain(&mut c, id, 2)), vec!["n", "r0", "r1", "r2"]);
        assert!(c.get_table_names().unwrap().contains(&t));
    }
}

#[test]
fn every_mode_delivers_each_kind_of_error_and_stays_usable() {
    for (framing, protocol) in MODES {
        let mut c = shared().client_with(framing, protocol);
        let t = unique("mode_errors");
        create(&mut c, &t, &["cf"]);

        let m = io_message(c.get_row(unique("mode_missing"), b"r".to_vec(), no_attrs()));
        assert!(
            m.starts_with("org.apache.hadoop.hbase.TableNotFoundException: "),
            "{framing:?} {protocol:?}: {m}"
        );
        assert_usable(&mut c);

        let ia = illegal_argument(c.scanner_get(123_456_789));
        assert_eq!(ia.message.as_deref(), Some("scanner ID is invalid"));
        assert_usable(&mut c);

        let ae = already_exists(c.create_table(t.clone(), vec![descriptor("cf")]));
        assert_eq!(ae.message.as_deref(), Some("table name already in use"));
        assert_usable(&mut c);

        let a = app_error(c.mutate_rows(
            t.clone(),
            vec![BatchMutation::new(b"r".to_vec(), vec![put_m("cf", b"v")])],
            no_attrs(),
        ));
        assert_eq!(a.kind, ApplicationErrorKind::InternalError);
        assert_usable(&mut c);

        put(&mut c, &t, "r", &[("cf:a", "still works")]);
        assert_eq!(
            values_of(
                &c.get(t, b"r".to_vec(), b"cf:a".to_vec(), no_attrs())
                    .unwrap()
            ),
            vec!["still works"]
        );
    }
}

#[test]
fn many_calls_share_one_connection() {
    let (mut c, t) = fresh_table("mode_many", &["cf"]);
    for i in 0..200 {
        c.mutate_row(
            t.clone(),
            format!("r{i:03}").into_bytes(),
            vec![put_m("cf:a", i.to_string().as_bytes())],
            no_attrs(),
        )
        .unwrap();
    }
    let id = c.scanner_open(t, Vec::new(), vec![], no_attrs()).unwrap();
    assert_eq!(drain(&mut c, id, 33).len(), 200);
}

#[test]
fn large_values_travel_in_every_mode() {
    let value: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    for (framing, protocol) in MODES {
        let mut c = shared().client_with(framing, protocol);
        let t = unique("mode_large");
        create(&mut c, &t, &["cf"]);
        c.mutate_row(
            t.clone(),
            b"r".to_vec(),
            vec![put_m("cf:big", &value)],
            no_attrs(),
        )
        .unwrap();
        let cells = c
            .get(t, b"r".to_vec(), b"cf:big".to_vec(), no_attrs())
            .unwrap();
        assert_eq!(
            cells[0].value.as_deref(),
            Some(value.as_slice()),
            "{framing:?} {protocol:?}"
        );
    }
}
