/// Taking over a database on a new machine (`aprs-cloud restore`).
extension Database {
  /// Deletes the listener lease whoever holds it, and returns what it was (nil when there was none).
  ///
  /// Only for a database restored from a replica: the holder ran on the machine that was lost, and
  /// its lease, still fresh in the copy, would keep the new listener off the air until it lapsed.
  /// Never call it on a database a listener may still be using.
  @discardableResult
  public func clearListenerLease() throws(StoreError) -> LeaseRecord? {
    try writeTransaction { () throws(StoreError) -> LeaseRecord? in
      let previous = try lease()
      let statement = try prepared("DELETE FROM listener_lease")
      defer { statement.reset() }
      try statement.run()
      return previous
    }
  }
}
