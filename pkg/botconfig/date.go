package botconfig

import (
	"fmt"
	"time"
	_ "time/tzdata" // zone names must load the same on every machine, with or without system tzdata
)

// dateLocation is the zone of basic_settings.timezone: UTC when empty.
// "Local" is refused: the server's zone is no business of a config.
func dateLocation(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name == "Local" {
		return nil, fmt.Errorf("the server's local zone cannot be named")
	}
	return time.LoadLocation(name)
}

// dateFact is the line that tells the model today's date, from the run's
// "now" variable (RFC 3339); "" when the bot does not include the date or
// now is missing.
func (b *Bot) dateFact(vars Vars) string {
	if b.dateIn == nil {
		return ""
	}
	now, err := time.Parse(time.RFC3339, vars["now"])
	if err != nil {
		return ""
	}
	local := now.In(b.dateIn)
	return fmt.Sprintf("- Today's date: %s, %s (time zone %s)", local.Weekday(), local.Format("2006-01-02"), b.dateIn)
}
