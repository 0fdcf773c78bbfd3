/// The sections and keys a program knows, so the ones it does not know can be reported.
///
/// Each program checks the configuration against `ConfigSchema.all`, the union of every
/// aprs-cloud program's settings, so the responder does not warn about the listener's keys and
/// the other way round. Sections listed as unchecked are accepted with any key (with their
/// subsections): they belong to features whose keys are not yet defined here.
public struct ConfigSchema: Sendable {
  /// Known sections and their keys.
  public var sections: [String: Set<String>]
  /// Sections (and their subsections) accepted with any key.
  public var uncheckedSections: [String]
  /// Keys earlier versions read and this one ignores, by section, each with what replaced it: a file that
  /// still sets one loads with that sentence as a warning (not as an unknown key).
  public var retiredKeys: [String: [String: String]]

  public init(
    sections: [String: Set<String>], uncheckedSections: [String] = [],
    retiredKeys: [String: [String: String]] = [:]
  ) {
    self.sections = sections
    self.uncheckedSections = uncheckedSections
    self.retiredKeys = retiredKeys
  }

  /// Both schemas' sections and keys.
  public func merging(_ other: ConfigSchema) -> ConfigSchema {
    var merged = self
    for (section, keys) in other.sections { merged.sections[section, default: []].formUnion(keys) }
    for section in other.uncheckedSections where !merged.uncheckedSections.contains(section) {
      merged.uncheckedSections.append(section)
    }
    for (section, keys) in other.retiredKeys {
      merged.retiredKeys[section, default: [:]].merge(keys) { current, _ in current }
    }
    return merged
  }

  /// Whether `[section]` means something to some program.
  public func knowsSection(_ section: String) -> Bool {
    sections[section] != nil || isUnchecked(section)
  }

  /// What replaced `key` in `[section]` when it is a retired key, else nil.
  public func retirement(section: String, key: String) -> String? { retiredKeys[section]?[key] }

  /// Whether `key` in `[section]` means something to some program.
  public func knows(section: String, key: String) -> Bool {
    sections[section]?.contains(key) == true || isUnchecked(section)
  }

  private func isUnchecked(_ section: String) -> Bool {
    uncheckedSections.contains { section == $0 || section.hasPrefix($0 + ".") }
  }

  /// The override variable of every known key.
  func environmentNames() -> Set<String> {
    var names: Set<String> = []
    for (section, keys) in sections {
      for key in keys { names.insert(ConfigFile.environmentName(section: section, key: key)) }
    }
    return names
  }

  /// Every setting of every aprs-cloud program.
  public static let all = ServerConfig.schema.merging(ListenerConfig.schema).merging(PushConfig.schema)
    .merging(ReplicationConfig.schema)
}
