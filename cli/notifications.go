package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

var (
	notificationColumns = []column{col("TIME", "created_at"), col("KIND", "kind"), col("STATUS", "status"), col("SUBJECT", "subject"),
		col("RECIPIENTS", "recipients"), col("RESOURCE", "resource_type"), col("RESOURCE ID", "resource_id"), col("ID", "id")}
	notificationFields = []column{col("id", "id"), col("kind", "kind"), col("status", "status"), col("subject", "subject"),
		col("recipients", "recipients"), col("resource_type", "resource_type"), col("resource_id", "resource_id"),
		col("workspace_id", "workspace_id"), col("data", "data"), col("created_at", "created_at"),
		col("deliveries_planned_at", "deliveries_planned_at")}
	deliveryColumns = []column{col("CHANNEL", "channel"), col("TARGET", "target"), col("STATUS", "status"),
		col("ATTEMPTS", "attempts"), col("LAST ERROR", "last_error"), col("NEXT ATTEMPT", "next_attempt_at"),
		col("DELIVERED", "delivered_at")}
)

func (a *app) notificationsCmd() *cobra.Command {
	// The API filters notifications by kind only: their status is shown, not filtered on.
	list := &cobra.Command{Use: "list", Short: "list the notifications recorded (key expiry, budgets, rate limits, invites)", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			return a.get(cmd.Context(), "/notifications", listQuery(cmd, map[string]string{"kind": "kind"}),
				view{list: notificationColumns})
		})}
	pageFlags(list)
	list.Flags().String("kind", "", "only notifications of this kind (e.g. api_key.rotated)")

	get := &cobra.Command{Use: "get <notification-id>", Short: "show a notification, its status and each of its deliveries",
		Long: `Shows a notification and its status (pending, delivered, failed, or skipped when it had nothing
to be delivered to), then one line per delivery: its channel (email or webhook), its target (the
address, or the webhook's id), status, attempts, last error and next attempt.`,
		Args: args("<notification-id>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/notifications/"+seg(in[0]), nil, view{custom: writeNotification})
		})}

	return group("notifications", "notifications recorded for the organisation, and their deliveries", list, get)
}

// writeNotification prints a notification's fields, then its deliveries as a table.
func writeNotification(w io.Writer, doc any) error {
	if err := writeObject(w, notificationFields, doc); err != nil {
		return err
	}
	deliveries, _ := lookup(doc, "deliveries").([]any)
	fmt.Fprintln(w)
	if len(deliveries) == 0 {
		msg := "no deliveries: nothing to deliver it to"
		if lookup(doc, "deliveries_planned_at") == nil {
			msg = "no deliveries yet: the delivery worker has not taken it up"
		}
		_, err := fmt.Fprintln(w, msg)
		return err
	}
	return writeTable(w, deliveryColumns, deliveries)
}
