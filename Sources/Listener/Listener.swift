/// The listener core (see issue 4).
public enum ListenerPlaceholder {}
