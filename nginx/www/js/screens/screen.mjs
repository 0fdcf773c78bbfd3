// The interface of every screen (screens/*.mjs; the top bar over the signed-in ones too): one class that extends
// Screen, made once at boot by app.mjs, which alone calls it.
//
// - constructor(context): finds its elements and binds their events. `context` (app.mjs): `state`, `api`,
//   `call(name, fields, options)` (with the station's identity), `features()`, `owner()` (this browser holds the
//   station key) and `actions` (signIn, signOut, proveClaim, send, postRead, updateSettings, enableNotifications,
//   disableNotifications, changeLanguage, keyChanged, render). A screen changes the page's state only through
//   them (or the models' own methods) and reads it back in update().
// - show(params): the route shows it: `{view, peer}`, `previous` (the route before), `focus` (move the focus
//   in, as a route the user chose does); the sign-in screen also takes `message` and `keyLink`.
// - hide(): another screen shows, or the station signed out.
// - update(): draws what `context.state` holds now, on every change (the sign-in screen while signed out, the
//   others while signed in, shown or not: two panes stand side by side on a wide screen); never moves the focus.
// - retranslate(): the language changed: says again what update() does not redraw; update() follows.

export class Screen {
  constructor(context) {
    this.context = context;
  }

  get state() {
    return this.context.state;
  }

  get actions() {
    return this.context.actions;
  }

  show() {}

  hide() {}

  update() {}

  retranslate() {}
}

/** The members every screen has (the Node tests check each module against it). */
export const SCREEN_INTERFACE = ["show", "hide", "update", "retranslate"];
