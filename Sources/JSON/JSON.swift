public enum JSONPlaceholder {}
