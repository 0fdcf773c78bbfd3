import Foundation
import TestSupport
import Testing

/// The Grafana dashboard shipped in nginx/grafana/: every metric its queries name, and every label they
/// select or group by, exists in a live scrape of a running stack (nginx, responder, listener logged in on
/// the APRS-IS fake, a message stored and pushed). A renamed metric fails here, not on an operator's wall.
@Suite struct DashboardTests {
  static let dashboardPath = TestPaths.nginxDirectory + "/grafana/aprs-cloud-dashboard.json"

  /// PromQL words that look like metric names but are functions, aggregations or keywords.
  static let promQLWords: Set<String> = [
    "sum", "rate", "irate", "increase", "max", "min", "avg", "count", "by", "without", "histogram_quantile",
    "time", "clamp_min", "clamp_max", "topk", "bottomk", "delta", "deriv", "abs", "on", "ignoring",
    "group_left", "group_right", "and", "or", "unless", "le", "vector", "scalar", "max_over_time",
    "min_over_time", "avg_over_time", "changes", "resets", "label_replace", "absent", "round", "ceil",
    "floor",
    "offset", "bool", "sort", "sort_desc",
  ]

  /// Labels that are not in `/metrics` itself: the histogram's bucket bound, and what Prometheus adds when it
  /// scrapes (the dashboard's `$job` variable selects on `job`).
  static let scrapeLabels: Set<String> = ["le", "job", "instance"]

  /// Every `expr` in the dashboard's panels (nested rows included).
  static func expressions(_ value: Any) -> [String] {
    if let object = value as? [String: Any] {
      return object.flatMap { key, child -> [String] in
        if key == "expr", let expr = child as? String { return [expr] }
        return expressions(child)
      }
    }
    if let items = value as? [Any] { return items.flatMap(expressions) }
    return []
  }

  /// The metric names in an expression: identifiers that are not PromQL words, label names (before `=`, `!=`,
  /// `=~` inside braces, or in `by (…)`), strings, durations or numbers.
  static func metricNames(in expr: String) -> (metrics: Set<String>, labels: Set<String>) {
    var metrics = Set<String>()
    var labels = Set<String>()
    let chars = Array(expr)
    var index = 0
    var braceDepth = 0
    var inGrouping = false
    while index < chars.count {
      let char = chars[index]
      if char == "\"" {
        index += 1
        while index < chars.count && chars[index] != "\"" { index += 1 }
        index += 1
        continue
      }
      if char == "[" {
        while index < chars.count && chars[index] != "]" { index += 1 }
        continue
      }
      if char == "{" { braceDepth += 1 }
      if char == "}" { braceDepth -= 1 }
      if char == ")" { inGrouping = false }
      if char.isLetter || char == "_" {
        var word = ""
        while index < chars.count && (chars[index].isLetter || chars[index].isNumber || chars[index] == "_") {
          word.append(chars[index])
          index += 1
        }
        var next = index
        while next < chars.count && chars[next] == " " { next += 1 }
        if braceDepth > 0 || inGrouping {
          labels.insert(word)
        } else if word == "by" || word == "without" {
          inGrouping = true
        } else if !promQLWords.contains(word) {
          metrics.insert(word)
        }
        continue
      }
      index += 1
    }
    return (metrics, labels)
  }

  @Test func everyQueryNamesWhatAMetricsScrapeHas() throws {
    let dashboard = try JSONSerialization.jsonObject(
      with: try Data(contentsOf: URL(fileURLWithPath: Self.dashboardPath)))
    let exprs = Self.expressions(dashboard)
    #expect(exprs.count >= 15, "the dashboard has its panels")

    let stack = try TestStack(.real())
    defer { stack.stop() }
    let aprsis = try FakeAPRSIS()
    defer { aprsis.stop() }
    let registered = try stack.post(
      "/v1/register",
      json:
        #"{"callsign":"N0CALL","ssid":7,"auth":"13023","platform":"android","pushToken":"fcm-token:APA91b-dash","ackMessages":true,"wantHistory":false,"since":0}"#
    )
    #expect(registered.status == 200, "\(registered.text)")
    let listener = try ListenerProcess(
      database: stack.databasePath, config: ListenerProcess.config(fake: aprsis))
    defer { listener.stop() }
    try #require(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")
    let database = SQLiteFile(path: stack.databasePath)
    try #require(try database.waitUntil { try $0.meta("connected") == "1" }, "\(listener.log)")
    _ = try aprsis.inject(["OH7AA-1>APRS,TCPIP*,qAC,T2TEST::N0CALL-7 :Dashboard{1"])
    try #require(
      try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 1 }, "\(listener.log)")

    let scrape = try stack.metrics()
    try #require(scrape.status == 200, "\(scrape.text)")
    let document = try PrometheusDocument(parsing: scrape.text)
    var missing: [String] = []
    for expr in exprs {
      let (metrics, labels) = Self.metricNames(in: expr)
      #expect(!metrics.isEmpty, "no metric in \(expr)")
      var families: [String] = []
      for metric in metrics {
        let suffix = ["_bucket", "_sum", "_count"].first {
          metric.hasSuffix($0) && document.families[String(metric.dropLast($0.count))] != nil
        }
        let family = suffix.map { String(metric.dropLast($0.count)) } ?? metric
        if document.families[family] == nil {
          missing.append("\(metric) in \(expr)")
        } else {
          families.append(family)
        }
      }
      // Each label the query selects or groups by (but `job`, `instance`, `le`) is one that the samples of its
      // families carry (when they have samples in this scrape).
      let samples = document.samples.filter { sample in families.contains { sample.name.hasPrefix($0) } }
      for label in labels
      where !Self.scrapeLabels.contains(label) && !samples.isEmpty
        && !samples.contains(where: { $0.labels[label] != nil })
      {
        missing.append("label \(label) in \(expr)")
      }
    }
    #expect(missing.isEmpty, "\(missing.joined(separator: "\n"))\n\nscrape:\n\(scrape.text)")
  }

  @Test func theExpressionReaderFindsNamesAndLabels() {
    let (metrics, labels) = Self.metricNames(
      in: #"histogram_quantile(0.95, sum by (le, endpoint) (rate(aprs_cloud_x_bucket{job="a"}[5m])))"#)
    #expect(metrics == ["aprs_cloud_x_bucket"] && labels == ["le", "endpoint", "job"])
  }
}
