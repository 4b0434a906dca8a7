package reason

import "testing"

// The service's reason is read out of every conventional error body, whole.
func TestReason_readsEveryConventionalErrorBody(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ body, want string }{
		"RFC 9457, Prism's validation": {
			`{"type":"https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY","title":"Invalid request","status":422,` +
				`"detail":"Your request is not valid and no HTTP validation response was found in the spec, so Prism is generating this error for you.",` +
				`"validation":[{"location":["query","limit"],"severity":"Error","code":"pattern","message":"must match pattern \"^[0-9]+$\""}]}`,
			`Invalid request; Your request is not valid and no HTTP validation response was found in the spec, so Prism is generating this error for you.; query.limit: must match pattern "^[0-9]+$"`,
		},
		"RFC 9457, invalid-params": {
			`{"title":"Your request parameters didn't validate.","invalid-params":[{"name":"age","reason":"must be a positive integer"}]}`,
			`Your request parameters didn't validate.; age: must be a positive integer`,
		},
		"RFC 9457, errors": {
			`{"title":"Bad Request","detail":"2 problems","errors":[{"detail":"must be positive","pointer":"#/page"}]}`,
			`Bad Request; 2 problems; #/page: must be positive`,
		},
		"JSON:API": {
			`{"errors":[{"status":"403","title":"Forbidden","detail":"The token has no access to browsers.","source":{"parameter":"token"}}]}`,
			`token: The token has no access to browsers.`,
		},
		"error and message": {`{"error":"invalid_request","message":"page must be at most 50"}`, `page must be at most 50; invalid_request`},
		"error object":      {`{"error":{"code":"not_acceptable","message":"Only text/csv is served here"}}`, `Only text/csv is served here`},
		"errors of strings": {`{"errors":["limit is required","offset must be a number"]}`, `limit is required; offset must be a number`},
		"none":              {`{"status":"fail"}`, ``},
		"not an object":     {`<html>nope</html>`, ``},
	} {
		if got := Of([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: reason = %q, want %q", name, got, tc.want)
		}
	}
}
