public enum APRSPlaceholder {}
