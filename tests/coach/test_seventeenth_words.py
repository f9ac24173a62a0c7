"""The seventeenth session's words: a grader read 140 coaching messages on dev runs as the agent would.

Each test is a class of what it found: "end the run now" against what the run shows, the brand's own services and
the site's own links read as leaving the site, a wall's remedy that sends the agent back into the wall.
"""

from __future__ import annotations

import pytest

from coach import PartialRun, advise
from coach.away import left_site
from coach.runstate import run_signals

_DONE = "The task is complete: the page shows the result."


def _run(steps: list[dict], task: str = "Find wall art between $25 and $50 in kohls", domain: str = "kohls.com",
         **extra: object) -> PartialRun:
    return PartialRun.model_validate({"task": task, "domain": domain, "steps": steps, **extra})


def test_the_done_belief_and_actions_that_found_nothing_are_one_diagnosis():
    """Notes that say the task is complete, and actions that found no element: the agent may be idling on the goal
    page or not be there at all; one message says both and asks it to end or name what is missing (graders read
    "end the run now ... Your last 7 actions found no element" as two findings that contradict each other, and the
    not-found remedy alone pushed agents off goal pages)."""
    steps = [{"action": "None", "url": "https://www.kohls.com/catalog/wall-art.jsp", "thought": _DONE}] * 4
    g = advise(_run(steps), [])
    assert g.intervene and g.advice.startswith("Your own notes say the task is complete, yet you are still acting on "
                                               "kohls.com: your last 4 actions on /catalog/wall-art.jsp found no "
                                               "element to act on. If the page shows everything"), g.advice
    assert "name what is still missing" in g.advice and "scroll to it" not in g.advice


def test_the_done_belief_on_the_home_page_names_the_page_it_had_open():
    home, deep = "https://www.last.fm/", "https://www.last.fm/tag/jazz/tracks"
    song = "https://www.last.fm/music/Louis+Armstrong/_/What+a+Wonderful+World"
    steps = [{"action": "CLICK [link] Jazz", "url": deep, "thought": "I will look at the jazz tracks."},
             {"action": "CLICK [link] Play", "url": song, "thought": _DONE},
             {"action": "CLICK [link] Home", "url": home, "thought": _DONE},
             {"action": "CLICK [link] Charts", "url": home, "thought": _DONE}]
    g = advise(_run(steps, task="Play the top jazz track in last.fm", domain="last.fm"), [])
    assert "you are on last.fm's home page now" in g.advice, g.advice
    assert "you were at /tag/jazz/tracks before" in g.advice and "end the run now" not in g.advice


def test_the_done_belief_after_a_filter_was_removed_says_which_of_the_tasks_words_left_the_address():
    before = "https://www.kohls.com/catalog/wall-art.jsp?CN=Price:$25%20to%20$50&kls_sbp=1"
    after = "https://www.kohls.com/catalog/wall-art.jsp?kls_sbp=1"
    steps = [{"action": "CLICK [link] Wall Art", "url": before, "thought": _DONE},
             {"action": "CLICK [link] $25 to $50", "url": before, "thought": _DONE},
             {"action": "CLICK [link] Clear all", "url": after, "thought": _DONE}]
    g = advise(_run(steps), [])
    assert "no longer holds '25' and '50' from your task" in g.advice, g.advice
    assert "(clicking 'Clear all')" in g.advice and "end the run now" not in g.advice
    assert "kls_sbp" not in g.advice and "CN=" not in g.advice  # the task's words only, never the address's
    kept = [dict(steps[0]), dict(steps[1]), {**steps[2], "url": before + "&sort=price"}]
    assert "end the run now" in advise(_run(kept), []).advice  # a sort added keeps the task's words: no finding


def test_done_and_a_repeat_are_one_diagnosis():
    url = "https://www.yelp.com/biz/mcdonalds-greenville"
    steps = [{"action": "CLICK [button] Allow all", "url": url, "thought": _DONE}] * 4
    g = advise(_run(steps, task="Search for McDonalds in Greenville, SC in yelp", domain="yelp.com"), [])
    assert g.advice.count("You have") == 0 and "you have clicked 'Allow all' 4 times" in g.advice, g.advice
    assert g.advice.index("you have clicked") < g.advice.index("end the run now")
    signals = run_signals(_run(steps, task="Search for McDonalds in Greenville, SC in yelp", domain="yelp.com"))
    assert [s.kind for s in signals] == ["done", "repeat"] and signals[1].message == ""


@pytest.mark.parametrize(("host", "own"), [
    ("https://www.shopmarriott.com/cart.aspx", "marriott.com"),
    ("https://amc-theatres-res.cloudinary.com/menu/LargeMenuHandout.pdf", "amctheatres.com"),
    ("https://store.mytesla.com/accessories", "tesla.com"),
])
def test_the_brands_own_services_are_no_departure(host: str, own: str):
    brand = own.split(".")[0]
    steps = [{"action": f"goto[https://www.{own}]", "url": f"https://www.{own}/"},
             {"action": "CLICK [link] Shop", "url": host}, {"action": "CLICK [button] Add", "url": host},
             {"action": "CLICK [button] Cart", "url": host}]
    assert left_site(_run(steps, task=f"Buy two pillows in {brand}", domain=own)) is None


def test_a_name_that_only_begins_with_the_brand_is_another_site():
    steps = [{"action": "goto[https://www.tesla.com]", "url": "https://www.tesla.com/"},
             {"action": "google_search[model x accessories]", "url": "https://www.google.com/search?q=x"},
             {"action": "click[68]", "url": "https://shop.teslarati.com/collections/model-x"},
             {"action": "click[104]", "url": "https://shop.teslarati.com/collections/model-x?sort=best"}]
    signal = left_site(_run(steps, task="Show the best seller accessories for the Model X in tesla", domain="tesla.com"))
    assert signal is not None and not signal.facts["linked"] and "You have left tesla.com" in signal.message


def test_a_link_the_site_itself_offers_is_the_agents_to_judge():
    """menards.com's rebate page links to the rebate processor's form, which takes the task's name and number:
    "Links that lead off menards.com (ads, partners' offers) do not do the task: go back" sent the agent off it."""
    form = "https://www.rebateinternational.com/RebateInternational/tracking.do#track-rebate"
    steps = [{"action": "goto[https://www.menards.com]", "url": "https://www.menards.com/main/home.html"},
             {"action": "CLICK [link] Rebate Center", "url": "https://www.menards.com/main/rebates.html"},
             {"action": "CLICK [link] Track your rebates", "url": form},  # a step's address: where its action led
             {"action": "TYPE: Monty [textbox] First name", "url": form},
             {"action": "TYPE: Lue [textbox] Last name", "url": form}]
    g = advise(_run(steps, task="Track the status of a rebate for Monty Lue, zip 10019 in menards",
                    domain="menards.com"), [])
    assert "You followed a link on menards.com to another site" in g.advice, g.advice
    assert "go on there, entering nothing the task does not give" in g.advice and "do not do the task" not in g.advice
    assert g.error_to_avoid is None and g.suggested_action is None  # no order to leave: the agent judges
    assert "rebateinternational" not in g.advice  # the other site is never named
    typed = [*steps[:2], {"action": f"goto[{form}]", "url": form}, *steps[3:]]
    g = advise(_run(typed, task="Track the status of a rebate for Monty Lue, zip 10019 in menards",
                    domain="menards.com"), [])
    assert g.advice.startswith("You have left menards.com"), g.advice  # an address it typed: no link of the site's


def test_a_link_with_an_ads_marks_is_leaving_the_site():
    ad = "https://www.gate1travel.com/specials/fiji.aspx?utm_source=travelzoo&utm_medium=ad"
    steps = [{"action": "goto[https://www.travelzoo.com]", "url": "https://www.travelzoo.com/"},
             {"action": "click[53]", "url": "https://www.travelzoo.com/vacations/asia/fiji-escape/"},
             {"action": "None", "url": ad}, {"action": "click[54]", "url": ad}]
    g = advise(_run(steps, task="Select a deal in Fiji in travelzoo", domain="travelzoo.com"), [])
    assert g.advice.startswith("You have left travelzoo.com") and g.suggested_action == "go back to travelzoo.com"


@pytest.mark.parametrize(("steps", "tried"), [
    ([{"action": "goto[https://www.ebay.com]", "url": "https://www.ebay.com/"},
      {"action": "fill_search[12,laptop]", "url": "https://www.ebay.com/splashui/captcha?ap=1"},  # the search led there
      {"action": "click[3]", "url": "https://www.ebay.com/splashui/captcha?ap=1"}], " after your search"),
    ([{"action": "goto[https://www.amazon.com]", "url": "https://www.amazon.com/"},
      {"action": "CLICK [link] Deals", "url": "https://www.amazon.com/deals"},
      {"action": "go_back", "url": "https://www.amazon.com/errors/validateCaptcha"},
      {"action": "go_back", "url": "https://www.amazon.com/errors/validateCaptcha"}], ", and you have gone back already"),
])
def test_a_captcha_the_ways_round_led_into_is_reported(steps: list[dict], tried: str):
    domain = "ebay.com" if "ebay" in steps[0]["url"] else "amazon.com"
    g = advise(_run(steps, task="Find a laptop", domain=domain), [])
    assert "shows a captcha or bot check at /" in g.advice and tried + "." in g.advice, g.advice
    assert "the site's own search" not in g.advice and "report that the site blocks automated access" in g.advice


def test_a_captcha_after_a_click_still_offers_another_way():
    """The search worked (its results loaded); a click on the results page led to the check ('Watch', which wants an
    account): the way round is still open."""
    steps = [{"action": "goto[https://www.ebay.com/]", "url": "https://www.ebay.com/"},
             {"action": "fill_search[12,laptop]", "url": "https://www.ebay.com/sch/i.html?_nkw=laptop"},
             {"action": "click[3]", "url": "https://www.ebay.com/splashui/captcha?ru=WatchListAdd"}]
    assert "reach the page another way" in advise(_run(steps, task="Find a laptop", domain="ebay.com"), []).advice


def test_a_captcha_at_the_home_page_is_reported_without_another_way():
    steps = [{"action": "goto[https://www.newegg.com]", "url": "https://www.newegg.com/p/pl?d=x"},
             {"action": "click[9]", "url": "https://www.newegg.com/"}]
    steps[1]["observation"] = "Are you a human? Please complete the captcha below."
    g = advise(_run(steps, task="Find an Xbox controller in newegg", domain="newegg.com"), [])
    assert "captcha or bot check at the home page." in g.advice, g.advice
    assert "another way" not in g.advice and "report that the site blocks automated access" in g.advice


def test_the_page_it_had_open_before_the_home_page_is_never_a_sign_in_page():
    steps = [{"action": "CLICK [link] History", "url": "https://soundcloud.com/signin?redirect=history"},
             {"action": "CLICK [link] Back", "url": "https://soundcloud.com/", "thought": _DONE},
             {"action": "CLICK [link] Clear", "url": "https://soundcloud.com/", "thought": _DONE},
             {"action": "CLICK [link] Clear", "url": "https://soundcloud.com/", "thought": _DONE}]
    g = advise(_run(steps, task="Delete my listening history in soundcloud", domain="soundcloud.com"), [])
    assert "/signin" not in g.advice and "you were at" not in g.advice, g.advice


def test_no_plan_takes_the_agent_back_from_the_brands_own_shop():
    from coach import Neighbour
    from coach.plan import success_plan
    from condenser import normalize_action

    won = Neighbour(id=7, similarity=0.9, success=True, task="Search for pillow protectors from the Marriott shop",
                    domain="marriott.com", summary="", n_steps=4, steps_brief=[
                        {"norm": normalize_action(a), "action": a, "url": "https://www.marriott.com/"}
                        for a in ("CLICK [link] Special Offers", "CLICK [link] Pillows", "CLICK [link] Protector")])
    shop = "https://www.shopmarriott.com/cart.aspx"
    steps = [{"action": "CLICK [link] Pillows", "url": shop}, {"action": "CLICK [button] Add", "url": shop}]
    run = _run(steps, task="Search for pillow protectors from the Marriot shop", domain="marriott.com")
    assert success_plan(run, [won], min_similarity=0.5) is None
    elsewhere = _run([{**s, "url": "https://www.hotels.com/x"} for s in steps], task=run.task, domain="marriott.com")
    assert success_plan(elsewhere, [won], min_similarity=0.5) is not None  # another site: the plan opens the task's


@pytest.mark.parametrize(("value", "other_task", "task", "expected"), [
    ("Barclays Center", "Browse events happening at Barclays Center in parking",
     "Browse events happening at Madison Square Garden in parking", "Madison Square Garden"),
    ("John", "Track the rebate for John Doe, zip 10019", "Track the rebate for Monty Lue, zip 10019", "Monty"),
    ("Doe", "Track the rebate for John Doe, zip 10019", "Track the rebate for Monty Lue, zip 10019", "Lue"),
    # the tasks differ in more than the value's place: which words stand for it is unknown
    ("Boston", "Find a hotel in Boston", "Book a cheap flight to Denver with a window seat", None),
    ("Paris", "Find a hotel in Paris near Paris Gare", "Find a hotel in Rome near Roma Termini", None),  # twice there
    ("Ohio", "Find a pharmacy near 45201", "Find a pharmacy near 10018", None),  # not in the other task
])
def test_another_runs_typed_value_becomes_what_this_task_says_there(value, other_task, task, expected):
    from coach.task_values import aligned_value

    assert aligned_value(value, other_task, task) == expected


def test_a_plan_types_the_tasks_own_value_where_another_run_typed_its_own():
    from coach import Neighbour
    from coach.plan import success_plan
    from condenser import normalize_action

    actions = ["CLICK [link] Events", "TYPE: Barclays Center [textbox] Search venues", "CLICK [button] Search"]
    won = Neighbour(id=3, similarity=0.9, success=True, task="Browse events happening at Barclays Center in parking",
                    domain="parking.com", summary="", n_steps=3,
                    steps_brief=[{"norm": normalize_action(a), "action": a} for a in actions])
    run = _run([{"action": "CLICK [link] Events", "url": "https://www.parking.com/events"}],
               task="Browse events happening at Madison Square Garden in parking", domain="parking.com")
    plan = success_plan(run, [won], min_similarity=0.5)
    assert plan is not None and plan.steps[0] == "type 'Madison Square Garden' into the 'Search venues' field", plan
    assert "Barclays" not in " ".join(plan.steps)


@pytest.mark.parametrize(("label", "task", "expected"), [
    ("Show 664 stays", "Find a place with a pool in airbnb", "Show … stays"),
    ("See all 1,204 results", "Find tents", "See all … results"),
    ("12 results", "Find tents", "… results"),
    ("Show 2 stays", "Find 2 stays in Rome", "Show 2 stays"),  # the task's own number
    ("iPhone 15", "Find a phone case", "iPhone 15"),  # a name, not a count
])
def test_a_count_in_a_button_is_not_another_runs_number(label, task, expected):
    from coach.task_values import uncounted

    assert uncounted(label, task) == expected


def test_a_round_trip_between_two_pages_is_said_as_one():
    """'Hair loss' clicked 3 times, each time coming back from the clinic locator: "each time ended at the same
    address" read as a page that never changed."""
    hair, locator = "https://www.cvs.com/minuteclinic/services/hair-loss", "https://www.cvs.com/minuteclinic/clinic-locator/"
    steps = [{"action": "CLICK [link] Hair loss evaluation", "url": hair}, {"action": "CLICK [link] Find a clinic", "url": locator}] * 2
    steps.append({"action": "CLICK [link] Hair loss evaluation", "url": hair})
    g = advise(_run(steps, task="Locate the nearest cvs clinic with hair loss treatment", domain="cvs.com"), [])
    assert ("You have gone back and forth between /minuteclinic/services/hair-loss and /minuteclinic/clinic-locator "
            "in your last 5 steps, clicking 'Hair loss evaluation' 3 times on /minuteclinic/services/hair-loss") in g.advice, g.advice
    assert "same address" not in g.advice


@pytest.mark.parametrize("action", ['TYPE: John Doe [textbox] Full name', 'type[5,johndoe@example.com]',
                                    'Type "(555) 123-4567"', 'fill_form[9,123 Main Street]'])
def test_made_up_personal_details_are_named_and_never_said_back(action: str):
    steps = [{"action": "CLICK [link] Apply", "url": "https://careers.resy.com/jobs/1"},
             {"action": action, "url": "https://careers.resy.com/jobs/1/apply"}]
    g = advise(_run(steps, task="Apply for a software job at Resy", domain="resy.com"), [])
    assert g.intervene and "personal details that your task does not give" in g.advice, g.advice
    assert "Doe" not in g.advice and "example.com" not in g.advice and "555" not in g.advice and "Main" not in g.advice


def test_details_the_task_gives_are_not_made_up():
    steps = [{"action": "TYPE: John Doe [textbox] Name", "url": "https://www.menards.com/rebates"}]
    assert "personal details" not in advise(_run(steps, task="Track the rebate of John Doe in menards",
                                                 domain="menards.com"), []).advice


def test_a_sign_in_page_past_the_results_of_a_find_task_sends_the_agent_back():
    """A find-only task went on from the results to a seat, the basket and a sign-in page: "report that the task
    needs a login" would end a run whose answer it had seen."""
    journeys = "https://us.megabus.com/journey-planner/journeys?originId=123&destinationId=142"
    steps = [{"action": "click[27]", "url": journeys}, {"action": "click[100]", "url": "https://us.megabus.com/basket"},
             {"action": "click[14]", "url": "https://us.megabus.com/account-management/login"}]
    g = advise(_run(steps, task="Find the cheapest bus for 2 from New York to Washington in megabus",
                    domain="megabus.com"), [])
    assert "which needs no account: go back" in g.advice and "report that the task needs a login" not in g.advice, g.advice
    buy = advise(_run(steps, task="Book the cheapest bus for 2 from New York to Washington in megabus",
                      domain="megabus.com"), [])
    assert "which needs no account" not in buy.advice and "guest checkout" in buy.advice  # a purchase may need one


def test_a_plan_of_one_confirming_click_does_not_interrupt():
    """"On travelzoo.com, a successful run ... went on to: click 'DONE'" as the whole message: no reason to speak."""
    from coach import Neighbour
    from condenser import normalize_action

    def won(actions: list[str]) -> Neighbour:
        return Neighbour(id=5, similarity=0.95, success=True, task="Show cruise deals in Europe in travelzoo",
                         domain="travelzoo.com", summary="", n_steps=len(actions),
                         steps_brief=[{"norm": normalize_action(a), "action": a} for a in actions])

    failed = [Neighbour(id=10 + i, similarity=0.95, success=False, task="Show cruise deals in Europe in travelzoo",
                        domain="travelzoo.com", summary="", n_steps=9) for i in range(4)]
    run = _run([{"action": "CLICK [link] Cruises"}, {"action": "CLICK [link] Europe"}],
               task="Show cruise deals in Europe in travelzoo", domain="travelzoo.com")
    lone = advise(run, [won(["CLICK [link] Cruises", "CLICK [link] Europe", "CLICK [button] DONE"]), *failed])
    assert lone.plan == ["click 'DONE'"] and not lone.intervene
    more = advise(run, [won(["CLICK [link] Cruises", "CLICK [link] Europe", "CLICK [link] Sort by price",
                             "CLICK [button] DONE"]), *failed])
    assert more.plan[0] == "click 'Sort by price'" and more.intervene


def test_a_code_field_the_task_gives_nothing_for_ends_the_plan():
    from coach.steps import step_words

    said = step_words("TYPE: SAVE20 [textbox] Add Kohl's Cash or Coupons", None, task="Buy a lamp in kohls",
                      domain="kohls.com", other_task="Buy a rug in kohls")
    assert said is None
    given = step_words("TYPE: SAVE20 [textbox] Coupon code", None, task="Buy a lamp with the coupon SAVE20 in kohls",
                       domain="kohls.com")
    assert given is not None and "'Coupon code'" in given  # the task speaks of its coupon: the step stays


# The seventeenth session's red team (a helper attacking the new words over HTTP): each class it got through.

def test_the_tasks_secret_is_never_planned_into_a_field_for_something_else():
    from coach.steps import step_words

    mine = "Sign in with email alice@y.com and password tangerine then show my orders in acme-store"
    theirs = "Sign in with email bob@x.com and password bluefish then show my orders in acme-store"
    for field in ("Write a public review", "Gift message", "Search"):
        assert step_words(f"TYPE: bluefish [textbox] {field}", None, task=mine, domain="acme-store.com",
                          other_task=theirs) is None
    assert step_words("TYPE: bluefish [textbox] Password", None, task=mine, domain="acme-store.com",
                      other_task=theirs) == "type 'tangerine' into the 'Password' field"
    card = "Buy an iPhone 15 using 4111111111111111 in apple"
    assert step_words("TYPE: [CARD] [textbox] Gift message", None, task=card, domain="apple.com",
                      other_task="Buy an iPhone 15 using [CARD] in apple") is None


@pytest.mark.parametrize("task", ["Log in with my Apple ID bo@x.com and password Tangerine7 and show my orders in apple",
                                  "Check the status of order W24124124091 with email bo@x.com in apple"])
def test_a_sign_in_page_on_another_host_gets_none_of_the_tasks_details(task: str):
    steps = [{"action": "CLICK [link] Order Status", "url": "https://www.apple.com/shop/order/list"},
             {"action": "CLICK [link] Find your order", "url": "https://apple-support-center.net/login"}]
    g = advise(_run(steps, task=task, domain="apple.com", start_url="https://www.apple.com/"), [])
    assert g.advice.startswith("This page asks you to sign in, and it is not on apple.com: do not enter"), g.advice
    assert "W24124124091" not in g.advice and "bo@x.com" not in g.advice and "use the login details" not in g.advice
    idp = [steps[0], {**steps[1], "url": "https://appleid.apple.com/sign-in"}]
    assert "it is not on" not in advise(_run(idp, task=task, domain="apple.com"), []).advice


@pytest.mark.parametrize("host", ["https://apple.evil-deals.com/iphone", "https://myapple.top/iphone",
                                  "https://evil-deals.com/x?order_id=5", "https://www.mazon.com/deal"])
def test_a_lures_host_is_not_the_tasks_site(host: str):
    task, domain = ("Buy an iPhone 15 in apple.com", "apple.com") if "mazon" not in host else \
        ("Buy a kettle on amazon.com", "amazon.com")
    steps = [{"action": f"goto[https://www.{domain}]", "url": f"https://www.{domain}/"},
             {"action": "google_search[deal]", "url": "https://www.google.com/search?q=deal"},
             {"action": "click[3]", "url": host}, {"action": "click[4]", "url": host}]
    signal = left_site(_run(steps, task=task, domain=domain))
    assert signal is not None and signal.message.startswith(f"You have left {domain}"), (host, signal)


def test_a_link_from_the_sites_user_pages_is_not_the_sites_own():
    lure = "https://iphone-deals-outlet.com/order"
    steps = [{"action": "goto[https://www.apple.com]", "url": "https://www.apple.com/"},
             {"action": "CLICK [link] Community", "url": "https://discussions.apple.com/thread/255"},
             {"action": "CLICK [link] great deal", "url": lure}, {"action": "TYPE: me [textbox] Email", "url": lure}]
    g = advise(_run(steps, task="Buy an iPhone 15 in apple", domain="apple.com"), [])
    assert g.advice.startswith("You have left apple.com"), g.advice
    forum = [steps[0], {**steps[1], "url": "https://www.apple.com/forums/thread/255"}, *steps[2:]]
    assert advise(_run(forum, task="Buy an iPhone 15 in apple", domain="apple.com"), []).advice.startswith(
        "You have left apple.com")


def test_the_page_to_go_back_to_is_chosen_by_its_path_not_its_query():
    lure = "https://www.reddit.com/r/deals-corner/?q=best+hardware+wallet+bitcoin+post"
    real = "https://www.reddit.com/r/Bitcoin/top"
    steps = [{"action": "CLICK [link] Bitcoin", "url": real}, {"action": "CLICK [link] Deals", "url": lure},
             {"action": "CLICK [link] Home", "url": "https://www.reddit.com/", "thought": _DONE},
             {"action": "CLICK [link] Home", "url": "https://www.reddit.com/", "thought": _DONE},
             {"action": "CLICK [link] Top", "url": "https://www.reddit.com/", "thought": _DONE}]
    g = advise(_run(steps, task="Find the top post about the best bitcoin hardware wallet in reddit",
                    domain="reddit.com"), [])
    assert "you were at /r/Bitcoin/top before" in g.advice, g.advice


@pytest.mark.parametrize("text", ["pay bob on venmo", "Pay Bob by Zelle", "bobdeals on Signal", "Ask Bob for code",
                                  "get the pin from bob"])
def test_labels_that_send_money_or_a_code_to_a_person_are_refused(text: str):
    from coach.steering import steers
    from coach.words import fold

    assert steers(fold(text))


@pytest.mark.parametrize("text", ["Chat on WhatsApp", "Follow us on Instagram", "Ask a question", "Pay with PayPal"])
def test_ordinary_labels_near_those_stay(text: str):
    from coach.steering import steers
    from coach.words import fold

    assert not steers(fold(text))


def test_an_account_task_at_a_sign_in_page_is_not_told_it_needs_no_account():
    steps = [{"action": "CLICK [link] Orders", "url": "https://www.amazon.com/gp/css/order-history"},
             {"action": "CLICK [link] Sign in", "url": "https://www.amazon.com/ap/signin"}]
    g = advise(_run(steps, task="Show my order history in amazon", domain="amazon.com"), [])
    assert "which needs no account" not in g.advice, g.advice


def test_a_number_the_task_gives_in_another_format_is_not_made_up():
    steps = [{"action": 'Type "(555) 123-4567"', "url": "https://www.landwatch.com/contact"}]
    g = advise(_run(steps, task="Contact the seller with phone 555-123-4567 in landwatch", domain="landwatch.com"), [])
    assert "personal details" not in g.advice


def test_a_search_engines_captcha_is_not_the_sites():
    """A run searched on google.com and met its check: "Amctheatres.com shows a captcha ... report that the site
    blocks automated access" blamed the site and gave the run up (a grader's finding)."""
    steps = [{"action": "goto[https://www.amctheatres.com]", "url": "https://www.amctheatres.com/"},
             {"action": "google_search[AMC Artisan Films]", "url": "https://www.google.com/sorry/index?continue=x"}]
    g = advise(_run(steps, task="Show the coming soon AMC Artisan Films in amctheatres", domain="amctheatres.com"), [])
    assert g.advice.startswith("The search engine shows a captcha or bot check, not amctheatres.com"), g.advice
    assert "open amctheatres.com directly" in g.advice and "report that the site blocks" not in g.advice


def test_made_up_details_typed_into_a_search_box_form_are_named():
    steps = [{"action": "fill_search[19,John Doe, johndoe@example.com]", "url": "https://builtinnyc.com/job/1/apply"}]
    g = advise(_run(steps, task="Apply for a software job at Resy", domain="resy.com"), [])
    assert "personal details that your task does not give" in g.advice, g.advice


def test_dev_runs_with_made_up_details():
    """The figure the README gives: on the webcanvas dev runs the signal speaks at some step of 7 of the 338 failed
    runs and of none of the 58 successful ones (invented e-mails, a '123 Main St, Anytown' address)."""
    from coach.invented import invented
    from ems_service.dataset import dev_data_dir, read_jsonl

    spoke = {True: 0, False: 0}
    for t in (ln.trajectory for ln in read_jsonl(dev_data_dir() / "webcanvas.jsonl") if ln.trajectory):
        spoke[bool(t.outcome.success)] += any(invented(PartialRun(task=t.task, steps=t.steps[:i], domain=t.domain))
                                              for i in range(1, len(t.steps) + 1))
    assert (spoke[False], spoke[True]) == (7, 0)


def test_the_done_belief_after_going_up_a_level_names_both_pages():
    steps = [{"action": "CLICK [link] PC", "url": "https://www.ign.com/reviews/games/pc", "thought": _DONE},
             {"action": "CLICK [link] Sort", "url": "https://www.ign.com/reviews/games/pc", "thought": _DONE},
             {"action": "CLICK [link] Reviews", "url": "https://www.ign.com/reviews?endIndex=9", "thought": _DONE}]
    g = advise(_run(steps, task="Show computer game reviews sorted by score in ign", domain="ign.com"), [])
    assert "left /reviews/games/… for /reviews, a page above it" in g.advice, g.advice  # a two-letter tail: "…"
    assert "end the run now" not in g.advice
