public enum StorePlaceholder { public static var count: Int { embeddedMigrations.count } }
