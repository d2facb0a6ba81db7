//! Read-only mode (`tabula serve --readonly`, HBase's `hbase.thrift.readonly`) on
//! a real server over TCP: data written before is read through both Thrift APIs,
//! and every write and schema change through either is refused with the error
//! HBase's read-only server answers, leaving the data as it was.

mod common;

use common::t2::*;
use common::*;
use tabula_thrift::hbase::THbaseSyncClient;
use tabula_thrift::hbase2::{
    TColumnIncrement, TIncrement, TMutation, TRowMutations, TTHBaseServiceSyncClient,
};

const REFUSAL: &str = "Thrift Server is in Read-only mode.";

#[test]
fn a_read_only_server_serves_reads_and_refuses_every_change() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data_dir = dir.path().join("data");
    let table = b"ro".to_vec();
    {
        let server = Tabula::start_at(&data_dir);
        let mut c = server.client();
        create(&mut c, &table, &["cf"]);
        put(&mut c, &table, "r1", &[("cf:a", "one")]);
        c.atomic_increment(table.clone(), b"r1".to_vec(), b"cf:n".to_vec(), 7)
            .expect("increment");
    }
    let server = Tabula::start_at_with_args(&data_dir, &[], &["--readonly"]);

    // Thrift1: reads answer, changes are IOErrors naming HBase's exception.
    let mut c = server.client();
    let read_one = |c: &mut Client| {
        let rows = c
            .get_row(table.clone(), b"r1".to_vec(), no_attrs())
            .expect("getRow");
        columns_of(&rows[0])
    };
    assert_eq!(read_one(&mut c)["cf:a"], "one");
    let refused = |message: String| {
        assert_eq!(
            message,
            format!("org.apache.hadoop.hbase.DoNotRetryIOException: {REFUSAL}")
        );
    };
    refused(io_message(c.mutate_row(
        table.clone(),
        b"r1".to_vec(),
        vec![put_m("cf:a", b"changed")],
        no_attrs(),
    )));
    refused(io_message(c.mutate_rows(
        table.clone(),
        vec![tabula_thrift::hbase::BatchMutation::new(
            b"r2".to_vec(),
            vec![put_m("cf:a", b"new")],
        )],
        no_attrs(),
    )));
    refused(io_message(c.delete_all_row(
        table.clone(),
        b"r1".to_vec(),
        no_attrs(),
    )));
    refused(io_message(c.atomic_increment(
        table.clone(),
        b"r1".to_vec(),
        b"cf:n".to_vec(),
        1,
    )));
    // An increment by 0 writes nothing (happybase's counter_get): a read.
    assert_eq!(
        c.atomic_increment(table.clone(), b"r1".to_vec(), b"cf:n".to_vec(), 0)
            .expect("counter read"),
        7
    );
    refused(io_message(c.disable_table(table.clone())));
    refused(io_message(c.delete_table(table.clone())));
    refused(io_message(
        c.create_table(b"other".to_vec(), vec![descriptor("cf")]),
    ));
    let id = c
        .scanner_open_with_scan(table.clone(), tscan(), no_attrs())
        .expect("scanner opens");
    assert_eq!(rows_of(&drain(&mut c, id, 10)), vec!["r1"]);
    assert_usable(&mut c);

    // Thrift2: the bare message, not to be retried.
    let mut c2 = server.client2(Framing::Buffered, Protocol::Binary);
    let refused2 = |e: tabula_thrift::hbase2::TIOError| {
        assert_eq!(e.message.as_deref(), Some(REFUSAL));
        assert_eq!(e.can_retry, Some(false));
    };
    let got = c2.get(table.clone(), tget("r1")).expect("get");
    assert_eq!(values(&got)["cf:a"], "one");
    refused2(tio(
        c2.put(table.clone(), tput("r1", &[("cf:a", "changed")], None))
    ));
    refused2(tio(c2.put_multiple(
        table.clone(),
        vec![tput("r3", &[("cf:a", "x")], None)],
    )));
    refused2(tio(
        c2.delete_single(table.clone(), tdelete("r1", None, None))
    ));
    refused2(tio(c2.increment(
        table.clone(),
        TIncrement {
            row: b"r1".to_vec(),
            columns: vec![TColumnIncrement::new(
                b"cf".to_vec(),
                b"n".to_vec(),
                Some(2),
            )],
            attributes: None,
            durability: None,
            cell_visibility: None,
            return_results: None,
        },
    )));
    refused2(tio(
        c2.append(table.clone(), tappend("r1", &[("cf:a", "+")]))
    ));
    refused2(tio(c2.mutate_row(
        table.clone(),
        TRowMutations::new(
            b"r1".to_vec(),
            vec![TMutation::Put(tput("r1", &[("cf:b", "2")], None))],
        ),
    )));
    refused2(tio(c2.check_and_put(
        table.clone(),
        b"r1".to_vec(),
        b"cf".to_vec(),
        b"a".to_vec(),
        b"one".to_vec(),
        tput("r1", &[("cf:a", "swapped")], None),
    )));
    refused2(tio(c2.truncate_table(tname(&table), true)));
    refused2(tio(c2.create_table(
        table_desc(b"other2", vec![family("f", None)]),
        vec![],
    )));
    let scanned = c2
        .get_scanner_results(table.clone(), tscan2(), 10)
        .expect("scan");
    assert_eq!(scanned.len(), 1);

    // Nothing changed: the row, the counter and the table list are as before.
    assert_eq!(
        values(&c2.get(table.clone(), tget("r1")).expect("get")),
        [
            ("cf:a".to_owned(), "one".to_owned()),
            (
                "cf:n".to_owned(),
                String::from_utf8_lossy(&7i64.to_be_bytes()).into_owned()
            ),
        ]
        .into_iter()
        .collect()
    );
    let tables = c.get_table_names().expect("tables");
    assert_eq!(tables, vec![table.clone()]);
    assert!(c2.table_exists(tname(&table)).expect("exists"));
}
