#!/usr/bin/env bash
# The coaching routes with curl (and jq), against a running service: the README's tour runs these very lines.
#   EMS_URL   (default http://127.0.0.1:8080)
#   EMS_API_KEY  when the service has keys (`webcoach keys create --namespace NS`)
set -euo pipefail
EMS_URL="${EMS_URL:-http://127.0.0.1:8080}"
auth=()
if [[ -n "${EMS_API_KEY:-}" ]]; then auth=(-H "Authorization: Bearer $EMS_API_KEY"); fi
json=(-H 'content-type: application/json')

# Stateless: guidance for a partial run (an agent clicking the same element on flightaware.com).
curl -sS --fail-with-body "${auth[@]}" "${json[@]}" "$EMS_URL/v1/coach" -d '{
  "trajectory": {
    "task": "Search for flights from Calgary (CYYC) to New York (ZNY) in flightaware",
    "start_url": "https://www.flightaware.com/",
    "steps": [
      {"action": "goto[https://www.flightaware.com/]", "url": "https://www.flightaware.com/"},
      {"action": "fill_search[112,CYYC]", "url": "https://www.flightaware.com/"},
      {"action": "click[704]", "url": "https://www.flightaware.com/"},
      {"action": "click[704]", "url": "https://www.flightaware.com/"},
      {"action": "click[704]", "url": "https://www.flightaware.com/"}
    ]
  }
}' | jq '{intervene, failure_risk, advice, signals}'

# A live session: start it, stream steps (each answer carries guidance when the coach intervenes), ask for the
# coaching so far, finish it (the run becomes an episode other agents learn from).
SESSION=$(curl -sS --fail-with-body "${auth[@]}" "${json[@]}" "$EMS_URL/v1/sessions" -d '{
  "task": "Search for flights from Calgary (CYYC) to New York (ZNY) in flightaware",
  "start_url": "https://www.flightaware.com/", "agent": "curl-example"
}' | jq -r .id)
echo "session $SESSION"

curl -sS --fail-with-body "${auth[@]}" "${json[@]}" "$EMS_URL/v1/sessions/$SESSION/steps" -d '{
  "steps": [
    {"action": "goto[https://www.flightaware.com/]", "url": "https://www.flightaware.com/"},
    {"action": "fill_search[112,CYYC]", "url": "https://www.flightaware.com/"}
  ]
}' | jq '{n_steps, guidance: (.guidance // "none: the coach is silent")}'

curl -sS --fail-with-body "${auth[@]}" "${json[@]}" "$EMS_URL/v1/sessions/$SESSION/steps" -d '{
  "steps": [
    {"action": "click[704]", "url": "https://www.flightaware.com/", "error": "element not found"},
    {"action": "click[704]", "url": "https://www.flightaware.com/", "error": "element not found"},
    {"action": "click[704]", "url": "https://www.flightaware.com/"}
  ]
}' | jq '{n_steps, intervene: .guidance.intervene, system_message: .guidance.system_message.content}'

curl -sS --fail-with-body "${auth[@]}" "$EMS_URL/v1/sessions/$SESSION/coaching" | jq '{intervene, failure_risk}'

curl -sS --fail-with-body "${auth[@]}" "${json[@]}" "$EMS_URL/v1/sessions/$SESSION/finish" \
  -d '{"outcome": {"success": false, "label_source": "self_report", "status": "gave up"}}' | jq .
