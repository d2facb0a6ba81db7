//! Thrift2's getSlowLogResponses and clearSlowLogResponses over the
//! regionservers' slow-call logs.
//!
//! Owns: naming a regionserver from a TServerName, HBase's query rules (slow or
//! large calls; region, table, client and user filters joined by AND or OR; a
//! limit per server) and the TOnlineLogRecord of a logged call.
//! Must not: keep or time calls (the regionserver's `slow_log` does).

use std::collections::BTreeSet;

use tabula_thrift::hbase2::{
    TFilterByOperator, TLogQueryFilter, TLogType, TOnlineLogRecord, TServerName,
};

use super::errors::Thrift2Result;
use super::Thrift2Handler;
use crate::backend::LoggedCall;

/// Calls per server a query returns when it names no limit (the IDL's default).
const DEFAULT_LIMIT: i32 = 10;

/// The name a regionserver goes by in this cluster: `host:port` as region
/// locations report it (a bare name where they report port 0).
pub fn server_key(name: &TServerName) -> String {
    match name.port {
        Some(port) if port > 0 => format!("{}:{port}", name.host_name),
        _ => name.host_name.clone(),
    }
}

/// The filter's non-empty value of one field.
fn given(field: &Option<String>) -> Option<&str> {
    field.as_deref().filter(|v| !v.is_empty())
}

/// The calls of one server `filter` selects, newest first, as HBase selects
/// them: calls of the asked-for kind; with any of region, table, client or
/// user given, those matching all (AND) or any (OR, the default) of them, a
/// table matching the start of the region name; at most `limit` of them.
pub fn select(calls: Vec<LoggedCall>, filter: &TLogQueryFilter) -> Vec<LoggedCall> {
    let large = filter.log_type == Some(TLogType::LARGE_LOG);
    let all_of = filter.filter_by_operator == Some(TFilterByOperator::AND);
    let region = given(&filter.region_name);
    let table = given(&filter.table_name);
    let client = given(&filter.client_address);
    let user = given(&filter.user_name);
    let wanted = [region, table, client, user].iter().flatten().count();
    let limit = usize::try_from(filter.limit.unwrap_or(DEFAULT_LIMIT)).unwrap_or(0);
    calls
        .into_iter()
        .filter(|c| c.call.kind.answers(large))
        .filter(|c| {
            if wanted == 0 {
                return true;
            }
            let matched = [
                region.is_some_and(|r| c.region == r),
                table.is_some_and(|t| c.region.starts_with(t)),
                client.is_some_and(|a| c.call.client == a),
                user.is_some_and(|u| c.call.user == u),
            ]
            .iter()
            .filter(|m| **m)
            .count();
            if all_of {
                matched == wanted
            } else {
                matched > 0
            }
        })
        .take(limit)
        .collect()
}

/// A logged call as HBase's OnlineLogRecord.
pub fn record(logged: LoggedCall) -> TOnlineLogRecord {
    let c = logged.call;
    TOnlineLogRecord {
        start_time: c.start_ms,
        processing_time: c.processing_ms,
        queue_time: 0,
        response_size: i64::try_from(c.response_bytes).unwrap_or(i64::MAX),
        client_address: c.client,
        server_class: "RegionServer".to_owned(),
        method_name: c.method,
        call_details: c.details,
        param: c.param,
        user_name: c.user,
        multi_gets_count: c.multi_gets,
        multi_mutations_count: c.multi_mutations,
        multi_service_calls: 0,
        region_name: Some(logged.region),
        block_bytes_scanned: None,
        fs_read_time: None,
    }
}

impl Thrift2Handler {
    /// getSlowLogResponses: each named server's selected calls, server after
    /// server (no server named: none, as in HBase).
    pub fn slow_log_responses(
        &self,
        servers: &BTreeSet<TServerName>,
        filter: &TLogQueryFilter,
    ) -> Thrift2Result<Vec<TOnlineLogRecord>> {
        let mut out = Vec::new();
        for server in servers {
            let calls = self.backend.slow_calls(&server_key(server))?;
            out.extend(select(calls, filter).into_iter().map(record));
        }
        Ok(out)
    }

    /// clearSlowLogResponses: per named server, whether its log was cleared
    /// (false where none is kept).
    pub fn clear_slow_logs(&self, servers: &BTreeSet<TServerName>) -> Thrift2Result<Vec<bool>> {
        servers
            .iter()
            .map(|server| Ok(self.backend.clear_slow_calls(&server_key(server))?))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_regionserver::slow_log::{SlowCall, SlowKind};

    fn call(region: &str, client: &str, user: &str, kind: SlowKind) -> LoggedCall {
        LoggedCall {
            call: SlowCall {
                start_ms: 1,
                processing_ms: 20,
                response_bytes: 10,
                client: client.to_owned(),
                method: "Get".to_owned(),
                details: "Get(tabula.tablet.GetRequest)".to_owned(),
                param: "tablet=1".to_owned(),
                user: user.to_owned(),
                multi_gets: 0,
                multi_mutations: 0,
                tablet: 1,
                table: String::new(),
                kind,
            },
            region: region.to_owned(),
        }
    }

    fn calls() -> Vec<LoggedCall> {
        vec![
            call("t1,,1.", "10.0.0.1:5", "alice", SlowKind::Slow),
            call("t1,m,2.", "10.0.0.2:5", "bob", SlowKind::Large),
            call("t2,,3.", "10.0.0.1:5", "bob", SlowKind::Both),
            call("t2,,3.", "10.0.0.3:5", "carol", SlowKind::Slow),
        ]
    }

    fn regions(selected: Vec<LoggedCall>) -> Vec<String> {
        selected
            .into_iter()
            .map(|c| format!("{} {}", c.region, c.call.user))
            .collect()
    }

    /// A filter with nothing set, as a client sends one.
    fn unset() -> TLogQueryFilter {
        TLogQueryFilter::new(None, None, None, None, None, None, None)
    }

    #[test]
    fn slow_or_large_calls_by_any_or_all_filters_up_to_the_limit() {
        let none = unset();
        assert_eq!(
            regions(select(calls(), &none)),
            vec!["t1,,1. alice", "t2,,3. bob", "t2,,3. carol"],
            "slow calls by default"
        );
        let large = TLogQueryFilter {
            log_type: Some(TLogType::LARGE_LOG),
            ..unset()
        };
        assert_eq!(
            regions(select(calls(), &large)),
            vec!["t1,m,2. bob", "t2,,3. bob"]
        );
        // OR (the default): the table or the client.
        let either = TLogQueryFilter {
            table_name: Some("t1".into()),
            client_address: Some("10.0.0.3:5".into()),
            ..unset()
        };
        assert_eq!(
            regions(select(calls(), &either)),
            vec!["t1,,1. alice", "t2,,3. carol"]
        );
        // AND: both.
        let both = TLogQueryFilter {
            table_name: Some("t2".into()),
            user_name: Some("bob".into()),
            filter_by_operator: Some(TFilterByOperator::AND),
            ..unset()
        };
        assert_eq!(regions(select(calls(), &both)), vec!["t2,,3. bob"]);
        let region = TLogQueryFilter {
            region_name: Some("t2,,3.".into()),
            limit: Some(1),
            ..unset()
        };
        assert_eq!(regions(select(calls(), &region)), vec!["t2,,3. bob"]);
        let nothing = TLogQueryFilter {
            limit: Some(-1),
            ..unset()
        };
        assert!(select(calls(), &nothing).is_empty());
    }

    #[test]
    fn servers_are_named_as_region_locations_name_them() {
        let name = |host: &str, port: Option<i32>| TServerName::new(host.to_owned(), port, None);
        assert_eq!(server_key(&name("10.0.0.7", Some(9090))), "10.0.0.7:9090");
        assert_eq!(
            server_key(&name("regionserver-0", Some(0))),
            "regionserver-0"
        );
        assert_eq!(server_key(&name("regionserver-0", None)), "regionserver-0");
    }
}
