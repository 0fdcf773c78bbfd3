import Config
import Logging
import Store

/// The push channels a configuration yields: a channel for each provider that can send, a state for each.
struct ChannelSetup {
  var clients: [DevicePlatform: any PushChannel] = [:]
  var states: [DevicePlatform: ProviderState] = [:]
  /// Warnings of providers left off by a missing setting (published for `/health` at start).
  var warnings: [DevicePlatform: String] = [:]

  /// Loads the credentials of each configured provider; a bad file stops that provider alone.
  /// With `apnsTokenFile`, the APNs provider token is kept in that file between processes. The Web Push channels
  /// take their slots from `slots`.
  init(
    _ config: PushConfig, logger: Logger, apnsTokenFile: String?, vapidKeyFile: String? = nil,
    slots: SlotPool = SlotPool()
  ) {
    if let android = config.android {
      switch FCMChannel.load(android, preview: config.preview, logger: logger) {
      case .success(let client):
        clients[.android] = client
        states[.android] = .ok
      case .failure(let error): states[.android] = .stopped(error.description)
      }
    } else {
      states[.android] = .off(config.androidOff ?? "not configured")
    }
    if let ios = config.ios {
      switch APNsChannel.load(ios, preview: config.preview, logger: logger) {
      case .success(let client):
        if let apnsTokenFile {
          let file = PrivateTokenFile(path: apnsTokenFile)
          client.cache = APNsChannel.TokenCache(
            load: {
              switch file.load() {
              case .success(let line): return line
              case .failure(let failure):
                logger.warn("apns provider token file not used", ["reason": failure.description])
                return nil
              }
            },
            save: { line in
              if case .failure(let failure) = file.save(line) {
                logger.warn("cannot keep the apns provider token", ["reason": failure.description])
              }
            })
        }
        clients[.ios] = client
        states[.ios] = .ok
      case .failure(let error): states[.ios] = .stopped(error.description)
      }
    } else {
      states[.ios] = .off(config.iosOff ?? "not configured")
    }
    addWebPush(config, keyFile: vapidKeyFile, slots: slots, logger: logger)
  }
}
