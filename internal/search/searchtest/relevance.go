package searchtest

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/sourcebase/sourcebase/internal/fold"
	"github.com/sourcebase/sourcebase/internal/search"
)

// A labeled relevance set for the engines' hybrid search: companies as a
// private-markets firm tracks them, and searches as its people type them,
// each with graded labels. Most queries share no word with the companies
// they are about (a search by meaning must find those), a few do (hybrid
// must not do worse there than keywords). The companies carry only the
// fields the companies resource weighs for text (canonicalName,
// description, sector, tags).

// RelevanceCompany is one company of the relevance set.
type RelevanceCompany struct {
	CanonicalName string
	Description   string
	Sector        string
	Tags          []string
}

// Record is the company as a record (decoded JSON) of the companies
// resource: what search.SemanticText and the search see.
func (c RelevanceCompany) Record() map[string]any {
	rec := map[string]any{"canonicalName": c.CanonicalName, "description": c.Description, "sector": c.Sector}
	if len(c.Tags) > 0 {
		tags := make([]any, len(c.Tags))
		for i, t := range c.Tags {
			tags[i] = t
		}
		rec["tags"] = tags
	}
	return rec
}

// RelevanceQuery is one search of the relevance set.
type RelevanceQuery struct {
	Text string
	// NoSharedKeyword: no word of Text (folded and split as the search
	// does, English stop words left out) is a word of a relevant
	// company's text fields (SharedKeywords is empty).
	NoSharedKeyword bool
	// Relevant grades the companies, by canonicalName: 2 highly relevant,
	// 1 partly; a company not named is not relevant.
	Relevant map[string]int
}

// RelevanceCompanies are the companies of the relevance set, of one
// organization.
var RelevanceCompanies = []RelevanceCompany{
	// Vehicles
	{"Voltaro", "Builds electric cars and light pickups at its own plant in Ohio, with battery packs and drivetrains designed in house.", "Automotive", []string{"electric vehicles", "series C"}},
	{"Haulstar", "Designs battery-powered heavy trucks and buses for freight fleets and transit agencies.", "Automotive", []string{"electric trucks", "commercial vehicles"}},
	{"Cellvance", "Produces lithium-ion battery cells and packs for carmakers and for grid storage.", "Energy storage", []string{"batteries"}},
	// Health
	{"Clinicly", "Practice-management platform for physicians: scheduling, billing and patient records in one place.", "Healthtech", []string{"SaaS", "series A"}},
	{"Mediroute", "Telehealth service connecting patients with nurses and general practitioners by video, day and night.", "Healthtech", []string{"telemedicine"}},
	{"Genexa", "Discovers antibody therapies for autoimmune diseases such as lupus and rheumatoid arthritis, using protein engineering.", "Biotech", []string{"antibodies", "preclinical"}},
	{"Oncora", "Develops targeted therapies for lung and breast tumors; two candidates are in phase II trials.", "Biotech", []string{"oncology", "clinical stage"}},
	{"Cardiosense", "Wearable patch that tracks cardiac rhythm around the clock and alerts cardiologists to arrhythmias.", "Medtech", []string{"wearables"}},
	// Finance
	{"Paylane", "Payment processing for internet merchants: card acceptance at checkout, payouts and fraud screening.", "Fintech", []string{"payments infrastructure"}},
	{"Ledgerly", "Bookkeeping and tax returns for freelancers and sole traders, reconciled from their bank feeds.", "Fintech", []string{"accounting"}},
	{"Lendwise", "Offers working-capital loans to independent shops and restaurants, underwritten from their bank transaction data.", "Fintech", []string{"credit"}},
	{"Coinvault", "Custody and trading of bitcoin and other cryptocurrencies for hedge funds and institutional investors.", "Fintech", []string{"crypto", "blockchain"}},
	// Insurance
	{"Shieldly", "Sells renters and homeowners policies through an app, with claims settled in minutes.", "Insurance", []string{"insurtech"}},
	{"Harvestguard", "Parametric crop insurance that pays growers automatically when rainfall data shows a dry season.", "Insurance", []string{"insurtech", "climate"}},
	// Logistics
	{"Freightly", "Digital freight brokerage matching shippers with trucking carriers across North America.", "Logistics", []string{"marketplace"}},
	{"Lastmile Collective", "Same-day parcel delivery in cities by cargo bikes and electric vans.", "Logistics", []string{"e-commerce"}},
	{"Shipwright", "Tracks ocean containers and predicts vessel arrival times at ports for importers.", "Logistics", []string{"supply chain", "visibility"}},
	{"Dockwise", "Warehouse robots that pick and pack e-commerce orders around the clock.", "Robotics", []string{"warehousing", "fulfilment"}},
	// Energy
	{"Solarix", "Develops and operates utility-scale solar farms in Spain and Texas.", "Energy", []string{"renewables", "project finance"}},
	{"Windward Offshore", "Builds floating foundations for wind turbines in deep water.", "Energy", []string{"renewables", "wind"}},
	{"Gridmind", "Software that balances electricity demand on a utility's grid with home batteries and smart thermostats.", "Energy", []string{"demand response"}},
	{"Hydrogenix", "Electrolyzers that make green hydrogen from renewable electricity for steel mills and refineries.", "Energy", []string{"hydrogen", "decarbonization"}},
	// Agriculture
	{"Fieldsense", "Soil sensors and satellite imagery that tell growers when to irrigate and fertilize.", "Agritech", []string{"precision farming"}},
	{"Greenstack", "Indoor vertical farms growing lettuce and herbs next to cities.", "Agritech", []string{"vertical farming"}},
	{"Herdly", "Collars that track the health and whereabouts of dairy cows.", "Agritech", []string{"animal health"}},
	// Cybersecurity
	{"Sentinex", "Detects intrusions and malware on corporate laptops and servers and isolates infected machines.", "Cybersecurity", []string{"endpoint security"}},
	{"Authentik", "Passwordless login and identity management for staff and contractors.", "Cybersecurity", []string{"identity"}},
	{"Phishguard", "Trains staff to spot phishing emails by sending them simulated ones.", "Cybersecurity", []string{"security awareness"}},
	{"Cloudwarden", "Scans cloud accounts for misconfigurations and exposed data.", "Cybersecurity", []string{"cloud security"}},
	// Education
	{"Tutorly", "Marketplace pairing pupils with tutors for math and science homework.", "Edtech", []string{"tutoring", "K-12"}},
	{"Parlo", "App that teaches foreign languages through short daily lessons and speech recognition.", "Edtech", []string{"language learning", "consumer"}},
	{"Campusly", "Platform for universities to manage admissions, enrollment and courses.", "Edtech", []string{"higher ed", "SaaS"}},
	// Robotics and drones
	{"Armature Robotics", "Robotic arms for welding and assembly in car plants and metal shops.", "Robotics", []string{"industrial robots"}},
	{"Skyscout", "Drones that inspect power lines, bridges and pipelines.", "Robotics", []string{"drones", "inspection"}},
	// Food and drink
	{"Verdello", "Makes plant-based burgers and sausages from peas and fava beans.", "Food", []string{"plant-based"}},
	{"Cultiva", "Grows chicken and beef from animal cells in bioreactors.", "Food", []string{"cultivated protein"}},
	{"Hopline", "Craft brewery whose lagers and ales are sold in pubs across Germany.", "Beverages", []string{"brewing"}},
	{"Kitchenly", "Delivers weekly boxes of recipes and fresh ingredients to home cooks.", "Food", []string{"meal kits", "subscription"}},
	// Real estate
	{"Nestly", "Online platform for buying and selling homes without an agent's commission.", "Real estate", []string{"proptech"}},
	{"Deskhub", "Flexible coworking desks and meeting rooms in London and Berlin.", "Real estate", []string{"coworking"}},
	{"Rentwise", "Helps landlords collect rent, screen tenants and schedule repairs.", "Proptech", []string{"residential"}},
	// Mining
	{"Cobaltica", "Explores for cobalt and nickel deposits in Western Australia.", "Mining", []string{"battery minerals"}},
	{"Aurum Ridge", "Gold mine in Nevada with an open pit and heap leaching.", "Mining", []string{"gold"}},
	// Media
	{"Streamhaus", "Streaming service for independent films and documentaries.", "Media", []string{"streaming", "subscription"}},
	{"Podwave", "Hosting, analytics and advertising for podcasts.", "Media", []string{"audio"}},
	{"Gazetta", "Local news publisher with daily newsletters in twelve towns.", "Media", []string{"journalism"}},
	// Legal
	{"Clauseworks", "Reads agreements with machine learning and flags risky clauses for in-house lawyers.", "Legal tech", []string{"contracts", "AI"}},
	{"Docketly", "Case management and billing tools for law firms.", "Legal tech", []string{"practice management"}},
	// People, travel, games
	{"Hirely", "Recruiting platform that screens applicants and schedules interviews for hiring managers.", "HR tech", []string{"recruiting"}},
	{"Wagely", "Payroll and benefits for the staff of restaurants and shops.", "HR tech", []string{"payroll"}},
	{"Wanderly", "Books hotels, flights and tours for business travelers.", "Travel", []string{"corporate travel"}},
	{"Pixelforge", "Studio making puzzle games for phones, free to play.", "Gaming", []string{"mobile games"}},
}

// RelevanceQueries are the searches of the relevance set.
var RelevanceQueries = []RelevanceQuery{
	// No word in common with the companies they are about.
	{Text: "automobile manufacturers", NoSharedKeyword: true, Relevant: map[string]int{"Voltaro": 2, "Haulstar": 2, "Cellvance": 1}},
	{Text: "software for doctors", NoSharedKeyword: true, Relevant: map[string]int{"Clinicly": 2, "Mediroute": 1}},
	{Text: "cancer drug developers", NoSharedKeyword: true, Relevant: map[string]int{"Oncora": 2, "Genexa": 1}},
	{Text: "heart monitoring device", NoSharedKeyword: true, Relevant: map[string]int{"Cardiosense": 2, "Mediroute": 1}},
	{Text: "agriculture", NoSharedKeyword: true, Relevant: map[string]int{"Fieldsense": 2, "Greenstack": 2, "Herdly": 2, "Harvestguard": 1}},
	{Text: "small business lending", NoSharedKeyword: true, Relevant: map[string]int{"Lendwise": 2, "Ledgerly": 1, "Wagely": 1}},
	{Text: "hackers", NoSharedKeyword: true, Relevant: map[string]int{"Sentinex": 2, "Phishguard": 2, "Cloudwarden": 1, "Authentik": 1}},
	{Text: "children education", NoSharedKeyword: true, Relevant: map[string]int{"Tutorly": 2, "Parlo": 1, "Campusly": 1}},
	{Text: "factory automation", NoSharedKeyword: true, Relevant: map[string]int{"Armature Robotics": 2, "Dockwise": 1}},
	{Text: "vegan meat substitutes", NoSharedKeyword: true, Relevant: map[string]int{"Verdello": 2, "Cultiva": 1}},
	{Text: "beer", NoSharedKeyword: true, Relevant: map[string]int{"Hopline": 2}},
	{Text: "precious metals producers", NoSharedKeyword: true, Relevant: map[string]int{"Aurum Ridge": 2, "Cobaltica": 1}},
	{Text: "movies and television", NoSharedKeyword: true, Relevant: map[string]int{"Streamhaus": 2, "Podwave": 1}},
	{Text: "attorneys", NoSharedKeyword: true, Relevant: map[string]int{"Docketly": 2, "Clauseworks": 2}},
	{Text: "recruitment agencies", NoSharedKeyword: true, Relevant: map[string]int{"Hirely": 2, "Wagely": 1}},
	{Text: "clean power generation", NoSharedKeyword: true, Relevant: map[string]int{"Solarix": 2, "Windward Offshore": 2, "Hydrogenix": 1, "Gridmind": 1}},
	{Text: "transporting goods", NoSharedKeyword: true, Relevant: map[string]int{"Freightly": 2, "Lastmile Collective": 2, "Shipwright": 2, "Haulstar": 1}},
	{Text: "digital currency", NoSharedKeyword: true, Relevant: map[string]int{"Coinvault": 2}},
	{Text: "unmanned aircraft", NoSharedKeyword: true, Relevant: map[string]int{"Skyscout": 2}},
	{Text: "livestock", NoSharedKeyword: true, Relevant: map[string]int{"Herdly": 2}},
	// Words in common.
	{Text: "payment processing", Relevant: map[string]int{"Paylane": 2}},
	{Text: "electric trucks", Relevant: map[string]int{"Haulstar": 2, "Voltaro": 1}},
	{Text: "cybersecurity", Relevant: map[string]int{"Sentinex": 2, "Authentik": 2, "Phishguard": 2, "Cloudwarden": 2}},
	{Text: "plant-based burgers", Relevant: map[string]int{"Verdello": 2, "Cultiva": 1}},
	{Text: "solar farms", Relevant: map[string]int{"Solarix": 2}},
}

// NDCG is the normalized discounted cumulative gain at k of a ranking
// (canonicalNames, best first): the sum over its first k of
// (2^rel-1)/log2(rank+1), divided by the same sum of the ideal ranking
// (relevant's grades, highest first). 0 when relevant grades nothing.
func NDCG(ranked []string, relevant map[string]int, k int) float64 {
	dcg := 0.0
	for i, name := range ranked[:min(k, len(ranked))] {
		dcg += gain(relevant[name]) / math.Log2(float64(i+2))
	}
	grades := make([]int, 0, len(relevant))
	for _, g := range relevant {
		grades = append(grades, g)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	ideal := 0.0
	for i, g := range grades[:min(k, len(grades))] {
		ideal += gain(g) / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

func gain(grade int) float64 {
	if grade <= 0 {
		return 0
	}
	return math.Exp2(float64(grade)) - 1
}

// StopWords are the English stop words SharedKeywords leaves out: a few
// of those the engines' English stop filters drop (Lucene's snowball
// list, which both the embedded engine and OpenSearch's english analyzer
// hold), so that no word a search matches is left out.
var StopWords = []string{
	"a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "in", "into", "is", "it", "its",
	"no", "not", "of", "on", "or", "so", "such", "than", "that", "the", "their", "them", "they", "this",
	"to", "was", "were", "which", "who", "with",
}

// Words splits text into its words as the search compares them: folded
// by fold.Text and cut at every character that is no letter or digit
// (finer than the engines' Unicode word boundaries, which keep "o'brien"
// one word: a word they match is one of these), stop words left out.
func Words(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(fold.Text(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !slices.Contains(StopWords, w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// SharedKeywords are the words of q's text that a company q grades as
// relevant holds in its text fields (s's text-weighted fields, as
// search.SemanticText gathers them), each as "word (company)".
func SharedKeywords(q RelevanceQuery, s *search.Schema, companies []RelevanceCompany) []string {
	var out []string
	for _, c := range companies {
		if q.Relevant[c.CanonicalName] == 0 {
			continue
		}
		words := Words(search.SemanticText(s, c.Record()))
		for _, w := range Words(q.Text) {
			if slices.Contains(words, w) {
				out = append(out, w+" ("+c.CanonicalName+")")
			}
		}
	}
	return out
}
