//! The slow-call log over Thrift2, on a real `tabula serve`: with the log kept,
//! getSlowLogResponses returns the tablet calls of the regionserver named by a
//! region location, newest first, filtered and limited as HBase filters them, and
//! clearSlowLogResponses empties it; with the log off (the default) both answer
//! as HBase does with its buffer off; a name that is no regionserver is a TIOError.

mod common;

use std::collections::BTreeSet;

use common::t2::*;
use common::*;
use tabula_thrift::hbase2::{
    TFilterByOperator, TLogQueryFilter, TLogType, TOnlineLogRecord, TServerName,
    TTHBaseServiceSyncClient,
};

/// A query with nothing set but what `edit` sets (as a client sends one).
fn query(edit: impl FnOnce(&mut TLogQueryFilter)) -> TLogQueryFilter {
    let mut q = TLogQueryFilter::new(None, None, None, None, None, None, None);
    edit(&mut q);
    q
}

/// The regionserver serving `table`'s row `r`, and that region's name.
fn server_of(c: &mut Client2, table: &[u8]) -> (BTreeSet<TServerName>, String) {
    let location = c
        .get_region_location(table.to_vec(), b"r".to_vec(), false)
        .expect("getRegionLocation");
    // HBase's region name: `table,startKey,regionId.`
    let info = &location.region_info;
    let region = format!(
        "{},{},{}.",
        String::from_utf8_lossy(&info.table_name),
        String::from_utf8_lossy(info.start_key.as_deref().unwrap_or_default()),
        info.region_id
    );
    ([location.server_name].into_iter().collect(), region)
}

fn methods(records: &[TOnlineLogRecord]) -> Vec<&str> {
    records.iter().map(|r| r.method_name.as_str()).collect()
}

#[test]
fn a_kept_slow_log_returns_filtered_calls_newest_first_and_clears() {
    // Every call is slow at a threshold of 0 ms.
    let server = Tabula::start_with(&[
        ("TABULA_SLOW_LOG_ENABLED", "true"),
        ("TABULA_SLOW_LOG_THRESHOLD_MS", "0"),
        ("TABULA_SLOW_LOG_SIZE", "64"),
    ]);
    let mut c = server.client2(Framing::Buffered, Protocol::Binary);
    create2(&mut c, b"slow_a", &["f"], 1);
    create2(&mut c, b"slow_b", &["f"], 1);
    let (servers, region_a) = server_of(&mut c, b"slow_a");
    c.clear_slow_log_responses(servers.clone())
        .expect("clearSlowLogResponses");
    for i in 0..3 {
        c.put(
            b"slow_a".to_vec(),
            tput("r", &[("f:q", &format!("v{i}"))], None),
        )
        .expect("put");
    }
    c.get(b"slow_a".to_vec(), tget("r")).expect("get");
    c.put(b"slow_b".to_vec(), tput("r", &[("f:q", "other")], None))
        .expect("put");

    // The table's calls only: three puts, then the get, newest first.
    let only_a = c
        .get_slow_log_responses(
            servers.clone(),
            query(|q| q.table_name = Some("slow_a".into())),
        )
        .expect("getSlowLogResponses");
    assert_eq!(methods(&only_a), vec!["Get", "Mutate", "Mutate", "Mutate"]);
    assert!(only_a
        .windows(2)
        .all(|w| w[0].start_time >= w[1].start_time));
    let get = &only_a[0];
    assert_eq!(get.region_name.as_deref(), Some(region_a.as_str()));
    assert!(get.param.contains("row=r"), "{get:?}");
    assert!(get.response_size > 0, "the get answered a cell: {get:?}");
    assert!(!get.client_address.is_empty());
    assert!(get.processing_time >= 0);
    // A table filter matches the start of region names: both tables; the
    // limit keeps the newest.
    let both = c
        .get_slow_log_responses(
            servers.clone(),
            query(|q| q.table_name = Some("slow_".into())),
        )
        .expect("getSlowLogResponses");
    assert_eq!(
        methods(&both),
        vec!["Mutate", "Get", "Mutate", "Mutate", "Mutate"]
    );
    let limited = c
        .get_slow_log_responses(
            servers.clone(),
            query(|q| {
                q.table_name = Some("slow_".into());
                q.limit = Some(2);
            }),
        )
        .expect("getSlowLogResponses");
    assert_eq!(methods(&limited), vec!["Mutate", "Get"]);
    assert!(limited[0]
        .region_name
        .as_deref()
        .is_some_and(|r| r.starts_with("slow_b,")));
    // Unfiltered, the catalog's calls (location lookups) are there too.
    let all = c
        .get_slow_log_responses(servers.clone(), query(|q| q.limit = Some(64)))
        .expect("getSlowLogResponses");
    assert!(all.len() > both.len(), "{all:#?}");
    // AND with a client nobody called from: nothing.
    let nobody = c
        .get_slow_log_responses(
            servers.clone(),
            query(|q| {
                q.table_name = Some("slow_a".into());
                q.client_address = Some("192.0.2.1:1".into());
                q.filter_by_operator = Some(TFilterByOperator::AND);
            }),
        )
        .expect("getSlowLogResponses");
    assert!(nobody.is_empty(), "{nobody:?}");
    // Nothing answered 100 MiB: no large calls.
    let large = c
        .get_slow_log_responses(
            servers.clone(),
            query(|q| q.log_type = Some(TLogType::LARGE_LOG)),
        )
        .expect("getSlowLogResponses");
    assert!(large.is_empty(), "{large:?}");

    // Cleared: empty until the next call.
    assert_eq!(
        c.clear_slow_log_responses(servers.clone())
            .expect("clearSlowLogResponses"),
        vec![true]
    );
    // (Only the tables' calls: the coordinator's rounds read the catalog.)
    let tables = || query(|q| q.table_name = Some("slow_".into()));
    let after = c
        .get_slow_log_responses(servers.clone(), tables())
        .expect("getSlowLogResponses");
    assert!(after.is_empty(), "{after:?}");
    c.get(b"slow_b".to_vec(), tget("r")).expect("get");
    let one = c
        .get_slow_log_responses(servers, tables())
        .expect("getSlowLogResponses");
    assert_eq!(methods(&one), vec!["Get"]);

    // A name that is no regionserver of the cluster.
    let stranger: BTreeSet<TServerName> = [TServerName::new("192.0.2.1".to_owned(), Some(1), None)]
        .into_iter()
        .collect();
    let err = c.get_slow_log_responses(stranger, query(|_| {}));
    assert!(
        matches!(err, Err(thrift::Error::User(_))),
        "a TIOError: {err:?}"
    );
}

#[test]
fn without_the_log_nothing_is_kept_and_nothing_cleared() {
    let server = Tabula::start();
    let mut c = server.client2(Framing::Buffered, Protocol::Binary);
    create2(&mut c, b"quiet", &["f"], 1);
    c.put(b"quiet".to_vec(), tput("r", &[("f:q", "v")], None))
        .expect("put");
    let (servers, _) = server_of(&mut c, b"quiet");
    let records = c
        .get_slow_log_responses(servers.clone(), query(|_| {}))
        .expect("getSlowLogResponses");
    assert!(records.is_empty(), "{records:?}");
    assert_eq!(
        c.clear_slow_log_responses(servers)
            .expect("clearSlowLogResponses"),
        vec![false]
    );
}
