/// Push delivery (see issue 5).
public enum PushPlaceholder {}
