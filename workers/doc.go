// Package workers holds the background workers that stand where two wings meet, or where the
// control plane meets the outside world: each reads what it needs through small interfaces
// and records what it did through commands.
//
//   - LogExportWorker reads the request-log wing (analytics: the rows of an export, written by
//     its file writers) and records each export's end (CompleteLogExport, FailLogExport).
//   - NotificationWorker delivers recorded notifications: e-mail over SMTP (go-mail) to the
//     addresses their audiences resolve to, and Standard Webhooks posts to the webhooks that
//     match them, recording each delivery, failure and retry on the notification's stream
//     (PlanNotificationDeliveries, RecordNotificationDelivered, RecordNotificationDeliveryFailed).
//   - RateLimitAlerts is a log sink before the analytics pipeline that turns rate-limit
//     refusals into rate_limit.exceeded notifications (RecordRateLimitAlert), off the request
//     path.
//
// cmd/ wires them. The key and reset workers stay in commands/: they read only the control
// plane's own read model and act through the unexported core of the commands they carry out.
//
// It imports analytics/ (the record, the sink, the store's read interface and the export
// writers; never a store), commands/, domain/, go-mail and the standard library: never a
// database driver, gateway/, projections/ or http/. Neither commands/ nor analytics/ imports
// it or each other.
package workers
