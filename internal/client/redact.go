package client

import (
	"net/url"
	"strings"
)

// display shows an address as users and logs see it: the query parameters'
// names, not their values, since some services put tokens and signatures in
// next-page links.
func (c *Client) display(u *url.URL) string {
	return displayURL(u)
}

func displayURL(u *url.URL) string {
	v := *u
	v.User = nil
	v.Fragment, v.RawFragment = "", ""
	if v.RawQuery != "" {
		var names []string
		for _, part := range strings.Split(v.RawQuery, "&") {
			name, _, _ := strings.Cut(part, "=")
			names = append(names, name+"=…")
		}
		v.RawQuery = ""
		return v.String() + "?" + strings.Join(names, "&")
	}
	return v.String()
}
